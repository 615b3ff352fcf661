import { asSessionId, asUserId } from "../ports/ids.js";
import type { ChatMessage } from "../ports/model-client.js";
import {
  type Ask,
  type AuditEntry,
  conversationKey,
  heldUntil,
  type LeaseAnswer,
  type NewAsk,
  type NewSession,
  type PendingReply,
  type PostClaim,
  pendingAskOf,
  type Session,
  type ToolCallRecord,
  type TurnLease,
} from "../ports/session-store.js";
import { MemoryApiRecords } from "./memory-api-records.js";

/** The in-memory store's tables, shared by its hot path, maintenance, admin and API parts as a database is. */
export class MemoryTables {
  readonly events = new Map<string, number>();
  readonly sessions = new Map<string, Session>();
  readonly byKey = new Map<string, string>();
  readonly messages = new Map<string, ChatMessage[]>();
  readonly queued = new Map<string, ChatMessage[]>();
  /** Final answers not yet posted, in the order their turns ended. */
  readonly replies = new Map<string, { reply: PendingReply; createdAt: number }>();
  /** Who runs each session's turn, until when. */
  readonly leases = new Map<string, { owner: string; until: number }>();
  readonly asks = new Map<string, Ask>();
  readonly settings = new Map<string, string>();
  readonly toolCalls = new Map<string, ToolCallRecord>();
  /** Ask id → when its card was settled; kept beside the asks, as the databases keep a column. */
  readonly settledCards = new Map<string, number>();
  /** `card:<ask id>` or `reply:<key>` → who posts it, until when; kept beside the rows, as the databases keep columns. */
  readonly postClaims = new Map<string, PostClaim>();
  readonly api = new MemoryApiRecords();
  readonly auditTrail: AuditEntry[] = [];

  /** The conversation's session, created when it has none: synchronous, so callers stay atomic. */
  boundSession(input: NewSession): Session {
    const key = conversationKey(input.conversation);
    const existing = this.byKey.get(key);
    if (existing) return this.sessions.get(existing)!;
    const session: Session = {
      id: asSessionId(input.id),
      conversation: { ...input.conversation },
      ownerId: asUserId(input.ownerId),
      status: "idle",
      lastOutcome: null,
      lastError: null,
      turnCount: 0,
      turnAsks: 0,
      turnIterations: 0,
      recoveryAttempts: 0,
      stopRequested: false,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      createdAt: input.now,
      updatedAt: input.now,
    };
    this.sessions.set(session.id, session);
    this.byKey.set(key, session.id);
    this.messages.set(session.id, []);
    return session;
  }

  /** Writes a new pending ask, and its post claim beside it. */
  addAsk(ask: NewAsk, sessionId: string, now: number): void {
    this.asks.set(ask.id, pendingAskOf(copy(ask), sessionId, now));
    if (ask.claim) this.postClaims.set(`card:${ask.id}`, { ...ask.claim });
  }

  /** Grants a post claim as the turn lease is granted; `open` says whether there is still something to post. */
  claimPost(key: string, open: boolean, lease: TurnLease): LeaseAnswer {
    if (!open) return { taken: false, holder: null };
    const held = this.postClaims.get(key);
    const free = !held || held.owner === lease.owner || held.until <= lease.now || held.owner === lease.displace;
    if (!free) return { taken: false, holder: held.owner };
    this.postClaims.set(key, heldUntil(lease));
    return { taken: true };
  }

  mustGet(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    return session;
  }

  queueOf(sessionId: string): ChatMessage[] {
    const queue = this.queued.get(sessionId) ?? [];
    this.queued.set(sessionId, queue);
    return queue;
  }
}

/** Every row leaves the store as a copy, as it would leave a database. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}
