import type { webApi } from "@slack/bolt";
import type { Logger } from "../../src/ports/logger.js";
import type { ProgressView } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { errorCode } from "./actor-directory.js";
import { renderProgress } from "./render-progress.js";
import type { ThreadStatus } from "./thread-status.js";

/** What takes a status message's place: drawn whole, with the metadata that finds it again after a crash. */
interface StatusReplacement {
  text: string;
  blocks: webApi.KnownBlock[];
  metadata?: { event_type: string; event_payload: Record<string, string> };
}

/**
 * Each turn's status line: posted when a step first shows progress, edited in place, and handed over to the card or
 * answer that follows (edited into it), so a thread never keeps a stale "Thinking…".
 */
export class StatusMessages {
  /** turnKey → the status message's ts and what it shows now, so an edit that changes nothing is not sent. */
  private readonly shown = new Map<string, { ts: Promise<string | undefined>; blocks: string }>();

  constructor(
    private readonly client: webApi.WebClient,
    private readonly threadStatus: ThreadStatus,
    private readonly logger: Logger,
  ) {}

  async show(progress: ProgressView): Promise<void> {
    const message = renderProgress(progress);
    const blocks = JSON.stringify(message.blocks);
    const previous = this.shown.get(progress.turnKey);
    // Nothing was shown for this turn (a Stop before any step, or a restart since): there is nothing to end.
    if (progress.done && previous === undefined) return;
    await this.threadStatus.show(progress.turnKey, progress.conversation, !progress.done);
    if (previous?.blocks === blocks) return;
    const { channel, thread } = progress.conversation;
    const posted = (async () => {
      const ts = await previous?.ts;
      if (ts) {
        await this.client.chat.update({ channel, ts, text: message.text, blocks: message.blocks });
        return ts;
      }
      const response = await this.client.chat.postMessage({ channel, thread_ts: thread, text: message.text, blocks: message.blocks });
      return response.ts;
    })();
    if (progress.done) this.shown.delete(progress.turnKey);
    else this.shown.set(progress.turnKey, { ts: posted.catch(() => undefined), blocks });
    await posted;
  }

  /**
   * Edits the turn's status message, if one shows, into `message` (a card, an answer's first part): `placed` is its
   * ts. `failed`: the edit was refused or its answer lost, so it may or may not have landed; the caller looks first.
   */
  async replace(
    turnKey: string | undefined,
    conversation: ConversationRef,
    message: StatusReplacement,
  ): Promise<{ placed?: string; failed?: true }> {
    const status = turnKey === undefined ? undefined : this.shown.get(turnKey);
    if (turnKey === undefined || status === undefined) return {};
    this.shown.delete(turnKey);
    await this.threadStatus.show(turnKey, conversation, false);
    const ts = await status.ts;
    if (!ts) return {};
    try {
      await this.client.chat.update({ channel: conversation.channel, ts, ...message });
      return { placed: ts };
    } catch (error) {
      this.logger.warn({ error: errorCode(error) }, "slack-status-replace failed");
      return { failed: true };
    }
  }
}
