import type { Logger } from "../logger.js";
import type { ApiStore, ExternalAsk } from "../ports/api-store.js";
import type { CallbackSender } from "../ports/ask-api.js";
import type { Ask, SessionStore } from "../ports/session-store.js";
import { askView } from "./ask-view.js";
import { callbackHeaders } from "./callback-signature.js";

/** Callbacks are retried this long after the ask ended (DESIGN §12), then given up. */
export const CALLBACK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
const FIRST_RETRY_MS = 5000;
const MAX_RETRY_MS = 15 * 60 * 1000;
const DUE_PER_ROUND = 50;

export interface CallbackOutboxDependencies {
  store: SessionStore & ApiStore;
  sender: CallbackSender;
  /** The key a token's callbacks are signed with; undefined once the token is gone. */
  signingKey: (token: string) => Promise<string | undefined>;
  clock: () => number;
  logger: Logger;
}

/** After attempt n fails, the next comes 5 s × 2^(n−1) later, at most 15 min. */
export function retryDelay(attempt: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 20));
}

/**
 * Delivers the callbacks of ended asks. The outbox is the asks themselves: an ended ask whose callback is not
 * recorded as done is due, so an end committed just before a crash is delivered after it. Each attempt is taken by
 * one process (a compare-and-set that also schedules the retry should the deliverer die), and a delivery is
 * recorded done on the receiver's 2xx: at least once, and once unless a crash falls between the two.
 */
export class CallbackOutbox {
  /** Asks whose callback this process is sending now: a slow receiver holds up its own callback only. */
  private readonly sending = new Set<string>();

  constructor(private readonly deps: CallbackOutboxDependencies) {}

  /** Sends every callback due now that this process is not already sending; resolves when those attempts end. */
  async deliverDue(): Promise<void> {
    const due = await this.deps.store.listDueCallbacks(this.deps.clock(), DUE_PER_ROUND);
    const fresh = due.filter((item) => !this.sending.has(item.ask.id));
    for (const item of fresh) this.sending.add(item.ask.id);
    await Promise.all(fresh.map((item) => this.deliver(item.external, item.ask).finally(() => this.sending.delete(item.ask.id))));
  }

  private async deliver(external: ExternalAsk, ask: Ask): Promise<void> {
    const { store, clock, logger } = this.deps;
    const now = clock();
    if (ask.endedAt !== null && now - ask.endedAt > CALLBACK_RETRY_WINDOW_MS) {
      await store.finishCallback(ask.id, "given-up", now);
      return;
    }
    const attempt = await store.takeCallback(ask.id, now, now + retryDelay(external.callbackAttempts + 1));
    if (attempt === undefined || external.callbackUrl === null) return;
    const key = await this.deps.signingKey(external.token);
    const session = await store.getSession(ask.sessionId);
    if (key === undefined || !session) {
      // A revoked token's callbacks stop: its owner can no longer verify what would be signed.
      await store.finishCallback(ask.id, "token-revoked", now);
      return;
    }
    const body = JSON.stringify(askView(ask, session, external));
    try {
      const status = await this.deps.sender.send(external.callbackUrl, body, callbackHeaders(body, key, Math.floor(clock() / 1000)));
      if (status >= 200 && status < 300) {
        await store.finishCallback(ask.id, "delivered", clock());
        return;
      }
      logger.warn({ askId: ask.id, status, attempt }, "api-callback refused");
    } catch (error) {
      logger.warn({ askId: ask.id, attempt, err: error instanceof Error ? error.message : String(error) }, "api-callback failed");
    }
  }
}
