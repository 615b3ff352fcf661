import { createHash, randomBytes, randomUUID } from "node:crypto";
import { canonicalJson } from "../ask/canonical-json.js";
import type { AskResult } from "../ask/result.js";
import type { AskEndings } from "../engine/ask-endings.js";
import type { AskResolver } from "../engine/ask-resolver.js";
import type { CardDesk } from "../engine/card-desk.js";
import type { RuntimeSettings } from "../engine/settings.js";
import type { Logger } from "../logger.js";
import type { ApiStore, ExternalAsk } from "../ports/api-store.js";
import type { AskApi, AskView, CallbackSender, CancelOutcome, CreateOutcome } from "../ports/ask-api.js";
import { PlaceError } from "../ports/errors.js";
import type { PlatformAdapter } from "../ports/platform-adapter.js";
import { code, rich, untrusted } from "../ports/rich-text.js";
import type { ConversationRef, SessionStore } from "../ports/session-store.js";
import { API_OWNER_PREFIX, matchToken, type TokenHash } from "./api-tokens.js";
import { parseAskRequest } from "./ask-request.js";
import { askView } from "./ask-view.js";
import { CallbackOutbox } from "./callback-outbox.js";

/** A long-poll looks at the store this often: an answer another process took is seen within it. */
export const WAIT_POLL_MS = 1000;

export interface ExternalAsksDependencies {
  store: SessionStore & ApiStore;
  cards: CardDesk;
  /** Ends asks exactly once: the API's cancel is the same claim as a tap. */
  resolver: AskResolver;
  adapterFor: (platform: string) => PlatformAdapter | undefined;
  settings: RuntimeSettings;
  endings: AskEndings;
  /** API_TOKENS, hashed; admins' tokens are read from the store at each check. */
  envTokens: readonly TokenHash[];
  /** Sends callbacks; without it, callback URLs wait in the outbox. */
  callbackSender?: CallbackSender | undefined;
  clock: () => number;
  track: (task: () => Promise<void>) => void;
  logger: Logger;
}

const ASK_ID = /^[A-Za-z0-9_-]{1,64}$/;
const CANCELLED: AskResult = { ok: false, cancelled: true };

/** Asks other programs put to people (DESIGN §12): created, read, awaited and cancelled for the token that owns them. */
export class ExternalAsks implements AskApi {
  private readonly callbacks: CallbackOutbox | undefined;
  /** The create in flight (and queued) per token and idempotency key. */
  private readonly creating = new Map<string, Promise<CreateOutcome>>();
  private readonly closing = new AbortController();

  constructor(private readonly deps: ExternalAsksDependencies) {
    const sender = deps.callbackSender;
    this.callbacks = sender && new CallbackOutbox({ ...deps, sender, signingKey: (token) => this.signingKey(token) });
    // An ask that ends here has its callback sent at once; the sweeper retries what fails, and what another process ended.
    deps.endings.onEnded((ask) => {
      if (ask.spec.external) deps.track(() => this.deliverDue());
    });
  }

  /** Delivers the callbacks owed now (the sweeper calls this every few seconds). */
  async deliverDue(): Promise<void> {
    await this.callbacks?.deliverDue();
  }

  async authenticate(secret: string): Promise<string | undefined> {
    return matchToken(secret, [...this.deps.envTokens, ...(await this.liveTokens())]);
  }

  /** The hex SHA-256 of a token's secret: the key its callbacks are signed with. */
  async signingKey(token: string): Promise<string | undefined> {
    return [...this.deps.envTokens, ...(await this.liveTokens())].find((candidate) => candidate.name === token)?.secretHash;
  }

  /**
   * Retries under one idempotency key run one after another in this process, so only the first opens a thread; the
   * others find its ask and replay it. (Across processes the store still keeps one ask; a thread opened by a racing
   * retry elsewhere stays as an empty opener.)
   */
  create(token: string, body: unknown, idempotencyKey?: string): Promise<CreateOutcome> {
    if (idempotencyKey === undefined) return this.createOnce(token, body, undefined);
    const key = `${token}\n${idempotencyKey}`;
    const previous = this.creating.get(key) ?? Promise.resolve();
    const attempt = previous.catch(() => {}).then(() => this.createOnce(token, body, idempotencyKey));
    this.creating.set(key, attempt);
    const forget = () => {
      if (this.creating.get(key) === attempt) this.creating.delete(key);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /** Ends every wait at once (a shutdown): each returns the ask as it stands, so no request holds the process. */
  endWaits(): void {
    this.closing.abort();
  }

  private async createOnce(token: string, body: unknown, idempotencyKey?: string): Promise<CreateOutcome> {
    const { store, clock } = this.deps;
    const parsed = parseAskRequest(body, this.deps.settings.get().askTimeoutSeconds);
    if (!parsed.ok) return { kind: "invalid", error: parsed.error };
    const request = parsed.request;
    const requestHash = createHash("sha256").update(canonicalJson(body)).digest("hex");
    const key = idempotencyKey ?? null;
    // Checked before anything is posted: a retry must not open a second thread.
    if (key !== null) {
      const earlier = await store.findByIdempotencyKey(token, key);
      if (earlier) return this.replay(token, earlier, requestHash);
    }
    const adapter = this.deps.adapterFor(request.platform);
    if (!adapter?.placeAsk) return { kind: "invalid", error: `ERROR: "channel": Parley is not connected to ${request.platform} here` };
    const title = request.spec.title ?? firstLine(request.spec.question);
    let conversation: ConversationRef;
    try {
      conversation = await adapter.placeAsk({
        channel: request.channel,
        thread: request.thread,
        opener: rich`📨 A question from ${code(token)}: ${untrusted(title)}`,
        title,
      });
    } catch (error) {
      if (error instanceof PlaceError) return { kind: "invalid", error: `ERROR: ${error.message}` };
      throw error;
    }
    const now = clock();
    const askId = randomBytes(9).toString("base64url");
    const created = await store.createExternalAsk({
      session: { id: randomUUID(), conversation, ownerId: `${API_OWNER_PREFIX}${token}`, now },
      ask: {
        id: askId,
        toolUseId: `api:${askId}`,
        spec: request.spec,
        siblingResults: [],
        deadline: now + request.spec.timeoutSeconds * 1000,
      },
      token,
      idempotencyKey: key,
      requestHash,
      metadata: request.metadata,
      callbackUrl: request.callbackUrl,
      now,
    });
    if (created.kind === "busy")
      return {
        kind: "conflict",
        error: `ERROR: "thread": the thread ${conversation.thread} is busy (an agent turn runs there, or another question waits); wait for it to end, or omit "thread" to start a new one`,
      };
    if (created.kind === "replayed") return this.replay(token, created.external, requestHash);
    await store.audit({ actor: `${API_OWNER_PREFIX}${token}`, action: "api-ask-created", target: askId, outcome: "pending", at: now });
    // Persist, then post: a crash in between leaves the card for recovery to post, never a card without its ask.
    this.deps.track(() => this.deps.cards.post(askId));
    const view = await this.view(token, askId);
    return { kind: "created", view: view! };
  }

  async get(token: string, askId: string, waitMs = 0, callerSignal?: AbortSignal): Promise<AskView | undefined> {
    const until = this.deps.clock() + waitMs;
    const signal = callerSignal ? AbortSignal.any([callerSignal, this.closing.signal]) : this.closing.signal;
    let fresh: AskResult | undefined;
    for (;;) {
      const left = until - this.deps.clock();
      // The waiter is registered before the read: an end between the two wakes it instead of waiting for the poll.
      const stop = new AbortController();
      const ended =
        left > 0 && !signal.aborted
          ? this.deps.endings.next(askId, Math.min(WAIT_POLL_MS, left), AbortSignal.any([signal, stop.signal]))
          : undefined;
      const view = await this.view(token, askId);
      if (view?.status !== "pending" || !ended) {
        stop.abort();
        // The waiter in the process that took the answer reads it whole (a password too); the store keeps it masked.
        return view && fresh && view.status !== "pending" ? { ...view, result: fresh } : view;
      }
      fresh = await ended;
    }
  }

  async cancel(token: string, askId: string): Promise<CancelOutcome> {
    const found = await this.owned(token, askId);
    if (!found) return { kind: "unknown" };
    const resolution = { status: "cancelled" as const, result: CANCELLED, storedResult: CANCELLED, answer: null, actor: null };
    const cancelled =
      found.ask.status === "pending" && (await this.deps.resolver.resolve(found.ask, found.session, resolution)).kind === "accepted";
    if (cancelled)
      await this.deps.store.audit({
        actor: `${API_OWNER_PREFIX}${token}`,
        action: "api-ask-cancelled",
        target: askId,
        outcome: "cancelled",
        at: this.deps.clock(),
      });
    const view = await this.view(token, askId);
    return { kind: cancelled ? "cancelled" : "ended", view: view! };
  }

  private replay(token: string, earlier: ExternalAsk, requestHash: string): Promise<CreateOutcome> | CreateOutcome {
    if (earlier.requestHash !== requestHash)
      return {
        kind: "conflict",
        error: "ERROR: Idempotency-Key: this key was used with another request; send the same body again, or use a new key",
      };
    return this.view(token, earlier.askId).then((view) => ({ kind: "replayed" as const, view: view! }));
  }

  private async owned(token: string, askId: string) {
    // Ask ids are short base64url words: anything else names no ask, and never reaches the database (a NUL would).
    if (!ASK_ID.test(askId)) return undefined;
    const [found, external] = await Promise.all([this.deps.store.getAskWithSession(askId), this.deps.store.getExternalAsk(askId)]);
    // Another token's ask is as unknown as one that never was: nothing tells a caller it exists.
    if (!found || !external || external.token !== token) return undefined;
    return { ...found, external };
  }

  private async view(token: string, askId: string): Promise<AskView | undefined> {
    const found = await this.owned(token, askId);
    return found && askView(found.ask, found.session, found.external);
  }

  private async liveTokens(): Promise<TokenHash[]> {
    return (await this.deps.store.listTokens()).filter((token) => token.revokedAt === null);
  }
}

/** The question's first line, at most 150 characters; cut between code points, never inside one. */
function firstLine(text: string): string {
  const characters = Array.from(text.split("\n", 1)[0] ?? "");
  return characters.length > 150 ? `${characters.slice(0, 149).join("")}…` : characters.join("");
}
