import type { App, webApi } from "@slack/bolt";
import type { AnswerOutcome, Engine, StopOutcome } from "../../src/engine/engine.js";
import type { Logger } from "../../src/logger.js";
import type { AskStatus } from "../../src/ports/session-store.js";
import { PARLEY_ACTION_PATTERN } from "./action-ids.js";
import { type ActorDirectory, errorCode } from "./actor-directory.js";
import { parseBlockActions } from "./parse-interaction.js";
import { parseMessageEvent } from "./parse-message-event.js";
import { parseViewSubmission, submissionErrors } from "./parse-view-submission.js";
import { ANSWER_MODAL_CALLBACK_ID, renderAnswerModal } from "./render-modal.js";
import { renderNoticeModal } from "./render-notice-modal.js";
import type { SlackCommandHandler } from "./slack-command.js";

export interface ListenerDependencies {
  app: App;
  engine: Engine;
  actors: ActorDirectory;
  logger: Logger;
  onCommand: SlackCommandHandler | undefined;
}

export const NOT_AVAILABLE_TEXT = "Admin commands are not available.";
const STOP_NOT_ALLOWED = "Only the person who started this conversation, or an admin, can stop it.";

export function endedText(status: AskStatus | undefined): string {
  if (status === "cancelled") return "This question was already cancelled.";
  if (status === "expired") return "This question already expired.";
  return "This question was already answered.";
}

/** The private line a person sees after a tap that changed nothing; undefined when the tap worked. */
export function outcomeNotice(outcome: AnswerOutcome): string | undefined {
  switch (outcome.kind) {
    case "accepted":
      return undefined;
    case "invalid":
    case "not-allowed":
      return outcome.message;
    case "already-ended":
      return endedText(outcome.status);
    case "unknown-ask":
      return "This question is no longer open.";
  }
}

function stopNotice(outcome: StopOutcome): string | undefined {
  if (outcome === "not-allowed") return STOP_NOT_ALLOWED;
  if (outcome === "not-running") return "Nothing is running here.";
  return undefined;
}

/** Wires Bolt's listeners to the engine. Every handler translates; the engine decides. */
export function registerListeners(deps: ListenerDependencies): void {
  const { app, engine, actors, logger } = deps;

  const onMessage = async (event: unknown, teamId: string | undefined, botUserId: string | undefined) => {
    const message = parseMessageEvent(event, { teamId, botUserId });
    if (!message) return;
    const author = await actors.get(message.userId);
    await engine.handleMessage({
      eventId: message.eventId,
      conversation: message.conversation,
      author,
      text: message.text,
      addressedToBot: message.addressedToBot,
    });
  };
  app.event("app_mention", async ({ event, body, context }) => onMessage(event, body.team_id ?? context.teamId, context.botUserId));
  app.event("message", async ({ event, body, context }) => onMessage(event, body.team_id ?? context.teamId, context.botUserId));

  app.action(PARLEY_ACTION_PATTERN, async ({ ack, body, client }) => {
    await ack();
    const parsed = parseBlockActions(body);
    if (!parsed || parsed.interaction.kind === "none") return;
    const tell = (text: string | undefined) =>
      text && parsed.channel
        ? notice(client, { channel: parsed.channel, user: parsed.userId, thread: parsed.thread, text }, logger)
        : undefined;
    const interaction = parsed.interaction;
    if (interaction.kind === "open") {
      // The trigger id dies three seconds after the tap: check quickly, then open the modal at once.
      const found = await engine.getAsk(interaction.askId);
      if (!found) return tell("This question is no longer open.");
      if (found.ask.status !== "pending") return tell(endedText(found.ask.status));
      // The owner needs no users.info round trip; anyone else may still be an admin.
      const allowed =
        engine.mayAnswer(found.session, { id: parsed.userId }) || engine.mayAnswer(found.session, await actors.get(parsed.userId));
      if (!allowed) return tell(`Only <@${found.session.ownerId}> or an admin can answer this.`);
      await client.views.open({ trigger_id: interaction.triggerId, view: renderAnswerModal(interaction.askId, found.ask.spec) });
      return;
    }
    const actor = await actors.get(parsed.userId);
    switch (interaction.kind) {
      case "answer":
        return tell(outcomeNotice(await engine.answer(interaction.askId, actor, interaction.input)));
      case "cancel":
        return tell(outcomeNotice(await engine.cancel(interaction.askId, actor)));
      case "stop":
        return tell(stopNotice(await engine.stop(interaction.sessionId, actor)));
    }
  });

  app.view(ANSWER_MODAL_CALLBACK_ID, async ({ ack, body }) => {
    const submission = parseViewSubmission(body);
    if (!submission)
      return ack({ response_action: "update", view: renderNoticeModal("This form could not be read. Try again from the card.") });
    const actor = await actors.get(submission.userId);
    const outcome = await engine.answer(submission.askId, actor, submission.input);
    if (outcome.kind === "accepted") return ack();
    if (outcome.kind === "invalid") {
      return ack({ response_action: "errors", errors: submissionErrors(submission, outcome.message, outcome.fieldErrors) });
    }
    return ack({ response_action: "update", view: renderNoticeModal(outcomeNotice(outcome) ?? "") });
  });

  app.command("/parley", async ({ ack, command, respond }) => {
    await ack();
    let text = NOT_AVAILABLE_TEXT;
    if (deps.onCommand) {
      try {
        const actor = await actors.get(command.user_id);
        text = (await deps.onCommand({ text: command.text, actor, conversation: null })).text;
      } catch (error) {
        logger.error({ error: errorCode(error) }, "slack-command failed");
        text = "That command failed. The error is in the bot's log.";
      }
    }
    await respond({ response_type: "ephemeral", text });
  });
}

async function notice(
  client: webApi.WebClient,
  target: { channel: string; user: string; thread: string | undefined; text: string },
  logger: Logger,
): Promise<void> {
  try {
    await client.chat.postEphemeral({
      channel: target.channel,
      user: target.user,
      text: target.text,
      ...(target.thread ? { thread_ts: target.thread } : {}),
    });
  } catch (error) {
    logger.warn({ error: errorCode(error) }, "slack-ephemeral failed");
  }
}
