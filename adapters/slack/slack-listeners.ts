import type { App, webApi } from "@slack/bolt";
import type { AdminHandler, Conversation } from "../../src/ports/conversation.js";
import type { Logger } from "../../src/ports/logger.js";
import { answerNotice, stopNotice } from "../../src/ports/notices.js";
import type { RichText } from "../../src/ports/rich-text.js";
import { PARLEY_ACTION_PATTERN } from "./action-ids.js";
import { type ActorDirectory, errorCode } from "./actor-directory.js";
import type { EventAckGate } from "./event-ack-gate.js";
import { parseBlockActions } from "./parse-interaction.js";
import { conversationOf, parseMessageEvent } from "./parse-message-event.js";
import { parseViewSubmission, submissionErrors } from "./parse-view-submission.js";
import { renderArgumentsModal } from "./render-arguments-modal.js";
import { ANSWER_MODAL_CALLBACK_ID, renderAnswerModal } from "./render-modal.js";
import { renderNoticeModal } from "./render-notice-modal.js";
import { toMrkdwn } from "./slack-dialect.js";

export interface ListenerDependencies {
  app: App;
  conversation: Conversation;
  actors: ActorDirectory;
  logger: Logger;
  admin: AdminHandler;
  /** Told when an event is stored (or dropped), so its held acknowledgement may go. */
  gate: EventAckGate;
}

/** Slack's words for "only admins": who counts as one here. */
export const SLACK_ADMIN_REFUSAL =
  "Sorry, `/parley` is for admins only (ADMIN_USER_IDS, or workspace admins and owners). Nothing was changed.";

/** Wires Bolt's listeners to the core. Every handler translates; the core decides. */
export function registerListeners(deps: ListenerDependencies): void {
  const { app, conversation, actors, logger } = deps;

  const onMessage = async (event: unknown, teamId: string | undefined, botUserId: string | undefined) => {
    const message = parseMessageEvent(event, { teamId, botUserId });
    if (!message) return;
    const author = await actors.get(message.userId);
    await conversation.handleMessage({
      eventId: message.eventId,
      conversation: message.conversation,
      author,
      text: message.text,
      addressedToBot: message.addressedToBot,
      ...(message.directTopLevel ? { directTopLevel: true } : {}),
    });
  };
  const onEvent = async (event: unknown, body: { team_id?: string; event_id?: string }, teamId: string | undefined, botUserId?: string) => {
    try {
      await onMessage(event, body.team_id ?? teamId, botUserId);
    } finally {
      if (body.event_id) deps.gate.release(body.event_id);
    }
  };
  app.event("app_mention", async ({ event, body, context }) => onEvent(event, body, context.teamId, context.botUserId));
  app.event("message", async ({ event, body, context }) => onEvent(event, body, context.teamId, context.botUserId));

  app.action(PARLEY_ACTION_PATTERN, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = parseBlockActions(body);
    if (!parsed || parsed.interaction.kind === "none") return;
    const tell = (text: RichText | undefined) =>
      text && parsed.channel
        ? notice(client, { channel: parsed.channel, user: parsed.userId, thread: parsed.thread, text: toMrkdwn(text) }, logger)
        : undefined;
    const interaction = parsed.interaction;
    if (interaction.kind === "open") {
      // The trigger id dies three seconds after the tap: check quickly, then open the modal at once.
      // The owner needs no users.info round trip; anyone else may still be an admin.
      let open = await conversation.openAnswer(interaction.askId, { id: parsed.userId });
      if (!open.ok && open.outcome.kind === "not-allowed")
        open = await conversation.openAnswer(interaction.askId, await actors.get(parsed.userId));
      if (!open.ok) return tell(answerNotice(open.outcome));
      await client.views.open({ trigger_id: interaction.triggerId, view: renderAnswerModal(interaction.askId, open.card.spec) });
      return;
    }
    if (interaction.kind === "arguments") {
      // Reading the arguments changes nothing, so anyone who sees the card may; the ask must still be the open one.
      const teamId = parsed.teamId ?? context.teamId;
      const card =
        teamId && parsed.channel && parsed.thread
          ? await conversation.pendingCard(conversationOf(teamId, parsed.channel, parsed.thread))
          : undefined;
      const approval = card?.askId === interaction.askId ? card.spec.approval : undefined;
      if (!approval) return tell(answerNotice({ kind: "unknown-ask" }));
      await client.views.open({ trigger_id: interaction.triggerId, view: renderArgumentsModal(approval.tool, approval.argumentsText) });
      return;
    }
    const actor = await actors.get(parsed.userId);
    switch (interaction.kind) {
      case "answer":
        return tell(answerNotice(await conversation.answer(interaction.askId, actor, interaction.input)));
      case "cancel":
        return tell(answerNotice(await conversation.cancel(interaction.askId, actor)));
      case "stop":
        return tell(stopNotice(await conversation.stop(interaction.sessionId, actor)));
    }
  });

  app.view(ANSWER_MODAL_CALLBACK_ID, async ({ ack, body }) => {
    const submission = parseViewSubmission(body);
    if (!submission)
      return ack({ response_action: "update", view: renderNoticeModal("This form could not be read. Try again from the card.") });
    const actor = await actors.get(submission.userId);
    const outcome = await conversation.answer(submission.askId, actor, submission.input);
    if (outcome.kind === "accepted") return ack();
    if (outcome.kind === "invalid") {
      return ack({ response_action: "errors", errors: submissionErrors(submission, outcome.message, outcome.fieldErrors) });
    }
    return ack({ response_action: "update", view: renderNoticeModal(toMrkdwn(answerNotice(outcome) ?? [])) });
  });

  app.command("/parley", async ({ ack, command, respond }) => {
    await ack();
    let text: string;
    try {
      const actor = await actors.get(command.user_id);
      // Slack slash commands carry no thread, so the command has no conversation.
      const reply = await deps.admin({ text: command.text, actor, conversation: null });
      text = reply.kind === "refused" ? SLACK_ADMIN_REFUSAL : toMrkdwn(reply.text);
    } catch (error) {
      logger.error({ error: errorCode(error) }, "slack-command failed");
      text = "That command failed. The error is in the bot's log.";
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
