import type { ApiStore } from "./api-store.js";
import type { Platform } from "./ids.js";
import type { TokenUsage } from "./model-client.js";
import type { Ask, AskStatus, ConversationRef, PendingReply, Session, SessionStatus, SessionStore } from "./session-store.js";
import type { StoreChanges } from "./store-changes.js";

export interface SessionFilter {
  status?: SessionStatus | undefined;
  channel?: string | undefined;
  ownerId?: string | undefined;
  limit: number;
  offset: number;
}

export interface StoreStats {
  sessionsByStatus: Record<SessionStatus, number>;
  asksByStatus: Record<AskStatus, number>;
  /** Median milliseconds from card to answer over answered asks; null with none. */
  medianAnswerMs: number | null;
  usage: TokenUsage;
  databaseBytes: number;
}

export interface PurgeCounts {
  sessions: number;
  messages: number;
  asks: number;
}

/** A final answer not yet posted, with when its turn wrote it (the engine's clock). */
export interface WrittenReply extends PendingReply {
  writtenAt: number;
}

/** What the sweeper and start-up recovery need: the rows that a crash or a deadline left behind. */
export interface MaintenanceStore {
  /** Forgets event ids recorded before `before`; returns how many went. */
  pruneEvents(before: number): Promise<number>;
  /** Final answers committed before `before` but not yet posted (a crash or a platform error in between), oldest first. */
  listPendingReplies(before: number, limit: number): Promise<WrittenReply[]>;
  /** Pending asks whose card was never posted (a crash between commit and post). */
  listUnpostedAsks(): Promise<Ask[]>;
  /** Pending asks past their deadline whose card was posted: nobody can miss a question they never saw. */
  listExpiredAsks(now: number, limit: number): Promise<Ask[]>;
  /**
   * Asks that ended since `since`, have a card, and whose settle was never recorded (a crash between the claim
   * and the card update, or a platform failure): re-settled on start. Oldest ending first.
   */
  listUnsettledAsks(since: number, limit: number): Promise<Ask[]>;
  /** Every session in one status (recovery reads the `running` ones a crash left). */
  listSessionsByStatus(status: SessionStatus): Promise<Session[]>;
  /** A platform's conversations active since `since`, most recent first: what a start catches up on. */
  listRecentConversations(platform: Platform, since: number, limit: number): Promise<ConversationRef[]>;
  /** Counts one recovery attempt of an interrupted turn and returns the new count. */
  countRecovery(sessionId: string): Promise<number>;
}

/** The read-mostly queries and the settings behind `/parley`. */
export interface AdminQueries {
  /** Sessions newest first (by last activity), filtered and paged. */
  listSessions(filter: SessionFilter): Promise<Session[]>;
  /** Every ask of a session, oldest first. */
  listAsks(sessionId: string): Promise<Ask[]>;
  /** Counts by status, median time to answer, token usage, database size. */
  stats(): Promise<StoreStats>;
  /** Deletes idle and failed sessions last active before `before`, with their rows; never waiting or running ones. */
  purgeEnded(before: number): Promise<PurgeCounts>;
  /** Runtime settings changed by admins, as stored strings. */
  loadSettings(): Promise<Record<string, string>>;
  /** Stores one runtime setting; it wins over the environment on the next start. */
  saveSetting(key: string, value: string): Promise<void>;
}

/** Everything one database holds, as the composition root opens it. */
export interface Storage extends SessionStore, MaintenanceStore, AdminQueries, ApiStore {
  /** Reads one row: resolves when the database answers (the health check), throws a StoreError when it does not. */
  ping(): Promise<void>;
  /** Closes the database; in-flight calls finish first. */
  close(): Promise<void>;
  /** Changes other processes commit, told at once; absent where polling is all there is (one SQLite file). */
  readonly changes?: StoreChanges;
}
