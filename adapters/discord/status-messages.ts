import { ActionRowBuilder, type APIMessage, ButtonBuilder, ButtonStyle, DiscordAPIError, type REST, Routes } from "discord.js";
import type { SessionId } from "../../src/ports/ids.js";
import type { ProgressView } from "../../src/ports/platform-adapter.js";
import { componentId } from "./custom-id.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import type { DiscordMessageBody } from "./render-card.js";

const NO_MENTIONS = { parse: [] as [] };

/** A status message; in memory, since a restart posts a new one. */
interface StatusMessage {
  channelId: string;
  messageId: string;
  content: string;
}

/**
 * Each turn's status line: posted when a step first shows progress, edited in place, and handed over to the card or
 * answer that follows (edited into it), so a thread never keeps a stale "Thinking…".
 */
export class StatusMessages {
  private readonly shown = new Map<string, StatusMessage>();

  constructor(private readonly rest: REST) {}

  async show(progress: ProgressView): Promise<void> {
    const channelId = progress.conversation.thread;
    const text = toDiscordMarkdown(progress.text);
    const content = progress.done ? `-# ${text}` : `⏳ ${text}`;
    const components = progress.done ? [] : [stopRow(progress.sessionId).toJSON()];
    const existing = this.shown.get(progress.turnKey);
    // Nothing was shown for this turn (a Stop before any step, or a restart since): there is nothing to end.
    if (progress.done && !existing) return;
    if (!progress.done && existing?.content === content) return;
    if (progress.done) this.shown.delete(progress.turnKey);
    if (existing) {
      const body = { content, components, allowed_mentions: NO_MENTIONS };
      await this.rest.patch(Routes.channelMessage(existing.channelId, existing.messageId), { body });
      if (!progress.done) existing.content = content;
      return;
    }
    const body = { content, components, allowed_mentions: NO_MENTIONS };
    const message = (await this.rest.post(Routes.channelMessages(channelId), { body })) as APIMessage;
    if (!progress.done) this.shown.set(progress.turnKey, { channelId, messageId: message.id, content });
  }

  /**
   * Edits the turn's status message, if one shows, into `body` (a card, an answer's first part) and returns it;
   * undefined when there is none or Discord refused the edit (the message is gone), so `body` is to be posted.
   */
  async replace(turnKey: string | undefined, body: DiscordMessageBody): Promise<{ channelId: string; messageId: string } | undefined> {
    const status = turnKey === undefined ? undefined : this.shown.get(turnKey);
    if (turnKey === undefined || status === undefined) return undefined;
    this.shown.delete(turnKey);
    try {
      await this.rest.patch(Routes.channelMessage(status.channelId, status.messageId), { body });
    } catch (error) {
      // A refusal means the edit did not land, so the caller posts. Anything else (the REST client already retried 5xx)
      // may have landed: rethrown, and the sweeper looks for the card before posting it again.
      if (error instanceof DiscordAPIError && error.status >= 400 && error.status < 500) return undefined;
      throw error;
    }
    return { channelId: status.channelId, messageId: status.messageId };
  }
}

function stopRow(sessionId: SessionId): ActionRowBuilder<ButtonBuilder> {
  return new ActionRowBuilder<ButtonBuilder>().addComponents(
    new ButtonBuilder()
      .setCustomId(componentId({ kind: "stop", sessionId }))
      .setLabel("Stop")
      .setStyle(ButtonStyle.Danger),
  );
}
