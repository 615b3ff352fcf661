import { webApi } from "@slack/bolt";
import type { Logger } from "../../src/ports/logger.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { errorCode } from "./actor-directory.js";

/**
 * The "is thinking…" line under a thread (`assistant.threads.setStatus`), set while a turn works and cleared when it
 * waits or ends. A channel where Slack refused it once is not asked again, so such channels cost no call for it.
 */
export class ThreadStatus {
  /** Turns whose thread shows "is thinking…" now. */
  private readonly busyTurns = new Set<string>();
  private readonly refusedIn = new Set<string>();

  constructor(
    private readonly client: webApi.WebClient,
    private readonly logger: Logger,
  ) {}

  /** Shows the turn as working (`busy`) or not, calling Slack only when that changes. */
  async show(turnKey: string, conversation: ConversationRef, busy: boolean): Promise<void> {
    if (busy === this.busyTurns.has(turnKey)) return;
    if (busy) this.busyTurns.add(turnKey);
    else this.busyTurns.delete(turnKey);
    if (this.refusedIn.has(conversation.channel)) return;
    const status = busy ? "is thinking…" : "";
    try {
      await this.client.assistant.threads.setStatus({ channel_id: conversation.channel, thread_ts: conversation.thread, status });
    } catch (error) {
      // Only Slack's own answer says "not here"; a network error says nothing about the channel.
      if ((error as { code?: string }).code === webApi.ErrorCode.PlatformError) this.refusedIn.add(conversation.channel);
      this.logger.debug({ error: errorCode(error) }, "slack-thread-status refused");
    }
  }
}
