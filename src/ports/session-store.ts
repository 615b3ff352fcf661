import type { AnswerValue } from "../ask/answer.js";
import type { AskSpec } from "../ask/spec.js";
import { type AskId, asAskId, asSessionId, type Platform, type SessionId, type UserId } from "./ids.js";
import type { ChatMessage, TokenUsage, ToolResultBlock } from "./model-client.js";

/** Where a session lives: one thread on one platform. */
export interface ConversationRef {
  platform: Platform;
  workspace: string;
  channel: string;
  thread: string;
}

export function conversationKey(conversation: ConversationRef): string {
  return `${conversation.platform}:${conversation.workspace}:${conversation.channel}:${conversation.thread}`;
}

export type SessionStatus = "idle" | "running" | "waiting" | "failed";
export type TurnOutcome = "completed" | "suspended" | "max-iterations" | "cancelled" | "failed";
export type AskStatus = "pending" | "answered" | "cancelled" | "expired";

export interface Session {
  id: SessionId;
  conversation: ConversationRef;
  ownerId: UserId;
  status: SessionStatus;
  lastOutcome: TurnOutcome | null;
  lastError: string | null;
  turnCount: number;
  /** Asks and model iterations in the current turn; reset when a new turn begins. */
  turnAsks: number;
  turnIterations: number;
  recoveryAttempts: number;
  stopRequested: boolean;
  usage: TokenUsage;
  createdAt: number;
  updatedAt: number;
}

export interface AskAnswer {
  /** Already masked: a password field is •••• here. */
  value: AnswerValue | null;
  other?: true;
}

export interface Ask {
  id: AskId;
  sessionId: SessionId;
  toolUseId: string;
  spec: AskSpec;
  status: AskStatus;
  /** Results for the sibling tool calls of the same message; the ask's own result is filled in on resume. */
  siblingResults: ToolResultBlock[];
  cardRef: string | null;
  deadline: number;
  answer: AskAnswer | null;
  answeredBy: UserId | null;
  createdAt: number;
  endedAt: number | null;
}

export interface NewSession {
  id: string;
  conversation: ConversationRef;
  ownerId: string;
  now: number;
}

export interface NewAsk {
  id: string;
  toolUseId: string;
  spec: AskSpec;
  siblingResults: ToolResultBlock[];
  deadline: number;
  /** The process that will post its card, written with the ask so no other process posts it meanwhile. */
  claim?: PostClaim;
}

/** The row a new ask becomes: pending, no card yet. Where a generated ask id is first named as one. */
export function pendingAskOf(newAsk: NewAsk, sessionId: string, now: number): Ask {
  // The post claim is kept beside the row, never in it.
  const { claim: _claim, ...ask } = newAsk;
  return {
    ...ask,
    id: asAskId(ask.id),
    sessionId: asSessionId(sessionId),
    status: "pending",
    cardRef: null,
    answer: null,
    answeredBy: null,
    createdAt: now,
    endedAt: null,
  };
}

/**
 * One iteration of the loop, written in one transaction. A step holding an assistant message counts as one
 * model iteration of the turn (`turnIterations`); a step of tool results only does not.
 */
export interface Step {
  messages: ChatMessage[];
  usage: TokenUsage;
  /** Suspend on this ask: the session becomes `waiting`. */
  ask?: NewAsk;
  /** End the turn. Queued messages, if any, start the next turn in the same transaction. */
  end?: {
    outcome: Exclude<TurnOutcome, "suspended">;
    error?: string;
    /** The turn's answer for the thread, kept until it is posted: a crash between the two cannot lose it. */
    reply?: PendingReply;
  };
  now: number;
}

export type StepResult = { nextTurn: false } | { nextTurn: true };

export interface AskResolution {
  status: Exclude<AskStatus, "pending">;
  answer: AskAnswer | null;
  answeredBy: string | null;
  /**
   * The user message with every tool_result of the suspended assistant message, secrets masked; null for an
   * approval, whose decision is read when the turn runs the approved call (nothing is appended then).
   */
  resultMessage: ChatMessage | null;
  /** `running` resumes the loop; `idle` ends the turn (Stop); null leaves the session as it is (an elicitation). */
  sessionStatus: "running" | "idle" | null;
  /** With `running`: the resumed turn's lease, taken in the same write for the process that will run the turn. */
  lease?: TurnLease;
  outcome?: TurnOutcome | undefined;
  /** Written in the same transaction as the claim. */
  audit: AuditEntry;
  now: number;
}

export type StartOrQueue = "started" | "queued" | "waiting" | "duplicate";

/** A tool call about to be sent: committed before it leaves, so a crash can never send it twice. */
export interface NewToolCall {
  sessionId: string;
  toolUseId: string;
  /** The exposed tool name. */
  name: string;
  /** SHA-256 of the canonical JSON of the arguments actually sent. */
  argumentsHash: string;
  now: number;
}

/** The journal entry of one tool call: `started` until its result is stored. */
export interface ToolCallRecord {
  sessionId: SessionId;
  toolUseId: string;
  name: string;
  argumentsHash: string;
  status: "started" | "finished";
  /** The tool_result given to the model; null while started. */
  result: ToolResultBlock | null;
  startedAt: number;
  finishedAt: number | null;
}

/** A request for the lease on a session's turn, or for the claim to post a card or a final answer. */
export interface TurnLease {
  owner: string;
  now: number;
  ttlMs: number;
  /** A holder known to be dead (its process is gone): its lease is taken over without waiting for it to expire. */
  displace?: string;
}

/** A turn's final answer waiting to be posted (an outbox row, written with the turn's end). */
export interface PendingReply {
  /** The turn's key: one reply per turn, and how a platform finds it if it was posted before a crash. */
  key: string;
  sessionId: SessionId;
  text: string;
  /** The process that will post it, written with the turn's end (see `NewAsk.claim`). */
  claim?: PostClaim;
}

/**
 * Who posts a card or a final answer, and until when. A start or a sweep posts only what nobody alive is posting:
 * a post in flight cannot be looked for yet, so without the claim the platform would show it twice.
 */
export interface PostClaim {
  owner: string;
  until: number;
}

/** What a granted lease or claim stores: its owner, and when it expires. */
export function heldUntil(lease: TurnLease): PostClaim {
  return { owner: lease.owner, until: lease.now + lease.ttlMs };
}

/** The lease a claim takes for the turn it resumes: only a claim that sets the session running takes one. */
export function resumedLease(resolution: AskResolution): PostClaim | undefined {
  return resolution.lease && resolution.sessionStatus === "running" ? heldUntil(resolution.lease) : undefined;
}

/** The answer to a lease or claim request: granted, or the holder that keeps it (null: nothing to take). */
export type LeaseAnswer = { taken: true } | { taken: false; holder: string | null };

/** A turn's lease granted comes with the session as the grant left it: the turn needs no other read to start. */
export type TurnLeaseAnswer = { taken: true; session: Session } | { taken: false; holder: string | null };

export interface AuditEntry {
  actor: string;
  action: string;
  target: string;
  outcome: string;
  at: number;
}

/**
 * The hot path: what every message, step and tap reads and writes. Async so a server database can implement it.
 * Every method is atomic on its own; the engine's exactly-once rules rest on that. Session status changes
 * follow the table in `src/store/transitions.ts`.
 */
export interface SessionStore {
  /** Records an inbound event id; true the first time, false for every redelivery. */
  claimEvent(eventId: string, now: number): Promise<boolean>;
  /** True when the event id was already recorded (a cheap early exit; the claim itself is atomic elsewhere). */
  hasEvent(eventId: string): Promise<boolean>;
  /** Creates a session, or returns the one already bound to that conversation. */
  createSession(input: NewSession): Promise<Session>;
  /** One session by id. */
  getSession(id: string): Promise<Session | undefined>;
  /** The session bound to a conversation (one thread), if any. */
  findSession(conversation: ConversationRef): Promise<Session | undefined>;
  /** The whole history of a session, oldest first. */
  loadMessages(sessionId: string): Promise<ChatMessage[]>;
  /**
   * Idle or failed: append the message (if any) and begin a turn. Running: queue it. Waiting: do nothing.
   * With an event id, the event is claimed in the same transaction: "duplicate" when it was seen before,
   * and a crash can never leave an event marked as seen without its message stored.
   */
  startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue>;
  /**
   * Writes one loop iteration: new messages only, usage, and an optional suspend or end. A suspend, or an end that
   * starts no next turn, drops the turn's lease in the same write: no turn is running any more.
   */
  commitStep(sessionId: string, step: Step): Promise<StepResult>;
  /** One ask by id. */
  getAsk(askId: string): Promise<Ask | undefined>;
  /** The ask and its session in one read: the hot path of every tap. */
  getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined>;
  /** A narrow read of the Stop flag, checked between loop iterations. */
  isStopRequested(sessionId: string): Promise<boolean>;
  /** The session's pending ask, if it is waiting on one. */
  pendingAsk(sessionId: string): Promise<Ask | undefined>;
  /** Compare-and-set from pending, with the result message and the audit row; the winner gets the ended ask, losers undefined. */
  resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined>;
  /**
   * Stores where the card is, and a deadline if given (a card posted late gets its full time; one on time keeps its
   * own). Returns the ask's status after the write: not `pending` when it ended while its card was being posted.
   */
  setCardRef(askId: string, cardRef: string, deadline?: number): Promise<AskStatus | undefined>;
  /**
   * Records that an ended ask's card now shows its ending, so start-up recovery leaves it alone. A store may write it
   * with its next write (SQLite: at most a second later): lost in a crash, the card is settled once more at the next
   * start, and a settle is an idempotent edit.
   */
  recordCardSettled(askId: string, now: number): Promise<void>;
  /**
   * Writes a pending ask that does not suspend the turn (a server's elicitation during a tool call): the session's
   * status, counters and history are untouched.
   */
  openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void>;
  /** The most recently active session of a channel (a DM) that waits on a question, if any. */
  waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined>;
  /**
   * Takes (or renews) the lease on a running session's turn for `owner` until `now + ttlMs`: granted when nobody
   * holds it, the owner already does, it expired, or its holder is `displace` (known dead). Otherwise the answer
   * names the holder. A session that is not running has no turn to lease.
   */
  takeTurn(sessionId: string, lease: TurnLease): Promise<TurnLeaseAnswer>;
  /**
   * Takes (or renews) the claim to post a pending ask's card, granted as `takeTurn` grants a lease; an ask whose
   * card is posted, or that ended, has nothing to claim (holder null).
   */
  claimCardPost(askId: string, lease: TurnLease): Promise<LeaseAnswer>;
  /** Takes (or renews) the claim to post a final answer still in the outbox, as `claimCardPost`. */
  claimReplyPost(key: string, lease: TurnLease): Promise<LeaseAnswer>;
  /** Drops the owner's lease on the session's turn: it stopped without a step that ended it (a fault, a shutdown). */
  releaseTurn(sessionId: string, owner: string): Promise<void>;
  /** The reply is in the thread: its outbox row goes. */
  replyPosted(key: string): Promise<void>;
  /** The newest ask made for one tool call of a session (its approval), if any. */
  askForToolUse(sessionId: string, toolUseId: string): Promise<Ask | undefined>;
  /** The journal entry of one tool call of a session, if it was ever started. */
  getToolCall(sessionId: string, toolUseId: string): Promise<ToolCallRecord | undefined>;
  /** Records that a call is about to be sent; false, and nothing written, when it was recorded before. */
  startToolCall(call: NewToolCall): Promise<boolean>;
  /** Stores a started call's result (the tool_result the model reads). */
  finishToolCall(sessionId: string, toolUseId: string, result: ToolResultBlock, now: number): Promise<void>;
  /** Sets the Stop flag of a running turn; the loop reads it between iterations. */
  requestStop(sessionId: string): Promise<void>;
  /** Appends one row to the audit trail. */
  audit(entry: AuditEntry): Promise<void>;
}
