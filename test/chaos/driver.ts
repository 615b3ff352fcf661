import Database from "better-sqlite3";
import type { FakeSlackApi, RecordedSlackCall } from "../fakes/fake-slack-api.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import type { SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { blockActions, messageEvent, slashCommand } from "../slack/slack-payloads.js";
import { LET_EXPIRE } from "./chaos-model.js";
import { type AskRow, postsOf, type SessionRow } from "./invariants.js";
import { actionIdsOf, sleep } from "./slack-proxy.js";

export const CHAOS_CHANNEL = "C_CHAOS";
export const OWNER = "U_ALICE";
export const STRANGER = "U_BOB";
export const ADMIN = "U_CAROL";

interface MentionAttempt {
  epoch: number;
  acked: boolean;
  at: number;
}

interface DrivenSession {
  label: string;
  thread: string;
  /** The ts of the newest mention sent (a lost mention is followed by a new one in the same thread). */
  mentionTs: string;
  attempts: MentionAttempt[];
  retries: number;
  lastRetryAt: number;
  done: boolean;
}

/** What the driver acts on: this channel's sessions and every pending ask. */
export interface DriverSnapshot {
  sessions: SessionRow[];
  pending: AskRow[];
}

export interface DriverCounts {
  sessionsStarted: number;
  mentionsSent: number;
  mentionRetries: number;
  lostMentions: number;
  taps: number;
  doubleTaps: number;
  strangerTaps: number;
  staleTaps: number;
  cancelTaps: number;
  adminRetries: number;
  failedRequests: number;
}

/**
 * Plays the people: starts sessions with signed app_mention events, answers the cards the fake Slack API saw
 * posted with signed block_actions taps (the owner, sometimes twice at once, sometimes a stranger), leaves
 * `[let-expire]` asks alone, and asks an admin to `/parley retry` sessions that failed. It reads the database
 * read-only to know which asks are still pending; the bot may die under it at any moment.
 */
export class ChaosDriver {
  readonly sessions = new Map<string, DrivenSession>();
  readonly taps = new Map<string, string[]>();
  readonly counts: DriverCounts = {
    sessionsStarted: 0,
    mentionsSent: 0,
    mentionRetries: 0,
    lostMentions: 0,
    taps: 0,
    doubleTaps: 0,
    strangerTaps: 0,
    staleTaps: 0,
    cancelTaps: 0,
    adminRetries: 0,
    failedRequests: 0,
  };
  /** Called once after the next tap that Slack's side saw acknowledged (200), to kill right after it. */
  afterTap: (() => void) | undefined;
  /** Called once after the next acknowledged Approve of a tool call, to kill between approval and execution. */
  afterApprove: (() => void) | undefined;
  /** Called once after the next mention that was acknowledged (200), to kill between the ack and the store. */
  afterMention: (() => void) | undefined;
  draining = false;
  private reader: Database.Database | undefined;
  private readonly lastTap = new Map<string, number>();
  private tsCounter = 0;
  private running = false;
  private loop: Promise<void> | undefined;
  private inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly options: {
      sender: SlackRequestSender;
      slack: FakeSlackApi;
      /** The SQLite file to read the rows from; or `read` instead. */
      databasePath?: string;
      /** The rows from elsewhere (a PostgreSQL fleet, read in the background); undefined until first read. */
      read?: () => DriverSnapshot | undefined;
      activeSessions: number;
      epoch: () => number;
      botUp: () => boolean;
      random: () => number;
    },
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        if (this.options.botUp()) {
          try {
            this.tick();
          } catch {
            // The database may be mid-recovery under us; the next tick reads again.
            this.closeReader();
          }
        }
        await sleep(120);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    this.closeReader();
  }

  /** True when every session ended (idle, or failed after the admin gave up) and nothing is pending. */
  settled(): boolean {
    return [...this.sessions.values()].every((session) => session.done);
  }

  private tick(): void {
    const now = Date.now();
    const snapshot = this.options.read ? this.options.read() : this.readFile();
    if (!snapshot) return;
    const byThread = new Map(snapshot.sessions.map((row) => [row.thread, row]));
    const pending = snapshot.pending;
    const pendingBySession = new Map(pending.map((ask) => [ask.session_id, ask]));

    for (const session of this.sessions.values()) {
      if (session.done) continue;
      const row = byThread.get(session.thread);
      if (!row || row.message_count === 0) {
        this.chaseMention(session, now);
        continue;
      }
      if (row.status === "idle" && row.last_outcome === "completed") {
        session.done = true;
        continue;
      }
      if (row.status === "failed" || (row.status === "idle" && row.last_outcome !== "completed")) {
        if (session.retries >= 8) session.done = true;
        else if (now - session.lastRetryAt > 2500) this.adminRetry(session, row);
        continue;
      }
      const ask = pendingBySession.get(row.id);
      if (row.status === "waiting" && ask?.card_ref) this.maybeTap(ask, now);
    }

    if (!this.draining) {
      const active = [...this.sessions.values()].filter((session) => !session.done).length;
      for (let index = active; index < this.options.activeSessions; index++) this.startSession();
      if (this.options.random() < 0.05) this.staleTap(new Set(pending.map((ask) => ask.id)));
    }
  }

  private startSession(): void {
    const label = `s${++this.counts.sessionsStarted}`;
    const ts = this.nextTs();
    const session: DrivenSession = { label, thread: ts, mentionTs: ts, attempts: [], retries: 0, lastRetryAt: 0, done: false };
    this.sessions.set(label, session);
    this.sendMention(session, 0);
  }

  /**
   * A mention with no stored message: resend it the way Slack retries (same ts, X-Slack-Retry-Num) when it was
   * never acknowledged; when it was acknowledged by a bot that has since died (or long ago), it is lost, and the
   * person mentions the bot again in the thread.
   */
  private chaseMention(session: DrivenSession, now: number): void {
    const last = session.attempts.at(-1);
    if (!last || last.at < 0) return;
    const epoch = this.options.epoch();
    if (!last.acked) {
      if (last.epoch < epoch || now - last.at > 3000) {
        this.counts.mentionRetries++;
        this.sendMention(session, session.attempts.length);
      }
      return;
    }
    if (last.epoch < epoch || now - last.at > 8000) {
      this.counts.lostMentions++;
      session.mentionTs = this.nextTs();
      this.sendMention(session, 0);
    }
  }

  private sendMention(session: DrivenSession, retryNum: number): void {
    const attempt: MentionAttempt = { epoch: this.options.epoch(), acked: false, at: -1 };
    session.attempts.push(attempt);
    this.counts.mentionsSent++;
    const event = messageEvent("app_mention", {
      user: OWNER,
      text: `<@${FAKE_BOT_USER_ID}> please deploy chaos:${session.label}`,
      channel: CHAOS_CHANNEL,
      ts: session.mentionTs,
      ...(session.mentionTs !== session.thread ? { threadTs: session.thread } : {}),
    });
    this.track(
      this.options.sender
        .event(event, { teamId: "T_PARLEY", eventId: `Ev_${session.mentionTs}` }, retryNum > 0 ? { retryNum } : {})
        .then(async (response) => {
          await response.text();
          attempt.acked = response.ok;
          if (response.ok && this.afterMention) {
            const hook = this.afterMention;
            this.afterMention = undefined;
            hook();
          }
        })
        .catch(() => {
          this.counts.failedRequests++;
        })
        .finally(() => {
          attempt.at = Date.now();
        }),
    );
  }

  /** `/parley retry` as an admin; only an acknowledged command counts against the session's retries. */
  private adminRetry(session: DrivenSession, row: SessionRow): void {
    session.lastRetryAt = Date.now();
    const command = slashCommand(ADMIN, `retry ${row.id}`, `${this.options.slack.url}/respond/retry-${row.id}`);
    this.track(
      this.options.sender
        .command({ ...command, channel_id: CHAOS_CHANNEL })
        .then(async (response) => {
          await response.text();
          if (!response.ok) return;
          session.retries++;
          this.counts.adminRetries++;
        })
        .catch(() => {
          this.counts.failedRequests++;
        }),
    );
  }

  private maybeTap(ask: AskRow, now: number): void {
    const spec = JSON.parse(ask.spec) as { question: string; type: string };
    if (spec.question.startsWith(LET_EXPIRE)) return;
    if (now - (this.lastTap.get(ask.id) ?? 0) < 1500) return;
    const card = this.cardOf(ask);
    if (!card) return;
    this.lastTap.set(ask.id, now);
    const random = this.options.random;
    const answers = card.actionIds.filter((id) => /:opt:\d+$|:continue$/.test(id));
    const pick = () => {
      if (random() < 0.08 || answers.length === 0) return `ask:${ask.id}:cancel`;
      return answers[Math.floor(random() * answers.length)] ?? `ask:${ask.id}:cancel`;
    };
    if (random() < 0.05) {
      this.counts.strangerTaps++;
      this.tap(ask.id, card, pick(), STRANGER, false);
    }
    const double = random() < 0.15;
    if (double) this.counts.doubleTaps++;
    const approval = spec.type === "approval";
    this.tap(ask.id, card, pick(), OWNER, true, approval);
    if (double) this.tap(ask.id, card, pick(), OWNER, true, approval);
  }

  /** A tap on a card whose ask already ended: it must change nothing. */
  private staleTap(pending: ReadonlySet<string>): void {
    const ended = [...this.taps.keys()].filter((askId) => !pending.has(askId));
    const askId = ended[Math.floor(this.options.random() * ended.length)];
    if (!askId) return;
    const call = this.postedCards().find((entry) => actionIdsOf(entry.params.blocks).some((id) => id.startsWith(`ask:${askId}:`)));
    if (!call) return;
    const card = { ts: String(call.result.ts), thread: String(call.params.thread_ts), actionIds: actionIdsOf(call.params.blocks) };
    const answer = card.actionIds.find((id) => /:opt:\d+$|:continue$/.test(id));
    if (!answer) return;
    this.counts.staleTaps++;
    this.tap(askId, card, answer, OWNER, true);
  }

  private tap(
    askId: string,
    card: { ts: string; thread: string },
    actionId: string,
    user: string,
    record: boolean,
    approval = false,
  ): void {
    // Approve is option 0 of an approval card.
    const approve = approval && record && actionId.endsWith(":opt:0");
    this.counts.taps++;
    if (actionId.endsWith(":cancel") && record) this.counts.cancelTaps++;
    if (record) this.taps.set(askId, [...(this.taps.get(askId) ?? []), actionId]);
    const payload = blockActions({
      user,
      actionId,
      channel: CHAOS_CHANNEL,
      cardTs: card.ts,
      threadTs: card.thread,
      responseUrl: `${this.options.slack.url}/respond/tap`,
    });
    this.track(
      this.options.sender
        .interaction(payload)
        .then(async (response) => {
          await response.text();
          if (response.ok && this.afterTap) {
            const hook = this.afterTap;
            this.afterTap = undefined;
            hook();
          }
          if (response.ok && approve && this.afterApprove) {
            const hook = this.afterApprove;
            this.afterApprove = undefined;
            hook();
          }
        })
        .catch(() => {
          this.counts.failedRequests++;
        }),
    );
  }

  /** The card Slack saw posted for this ask's stored reference. */
  private cardOf(ask: AskRow): { ts: string; thread: string; actionIds: string[] } | undefined {
    const ref = JSON.parse(ask.card_ref ?? "{}") as { ts?: string };
    const call = this.postedCards().find((entry) => String(entry.result.ts) === ref.ts);
    if (!call) return undefined;
    const actionIds = actionIdsOf(call.params.blocks);
    if (!actionIds.some((id) => id.startsWith(`ask:${ask.id}:`))) return undefined;
    return { ts: String(call.result.ts), thread: String(call.params.thread_ts), actionIds };
  }

  private postedCards(): RecordedSlackCall[] {
    return postsOf(this.options.slack.calls).filter((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith("ask:")));
  }

  private readFile(): DriverSnapshot {
    const db = this.db();
    return {
      sessions: db.prepare("SELECT * FROM sessions WHERE channel = ?").all(CHAOS_CHANNEL) as SessionRow[],
      pending: db.prepare("SELECT * FROM asks WHERE status = 'pending'").all() as AskRow[],
    };
  }

  private db(): Database.Database {
    if (!this.reader) {
      this.reader = new Database(this.options.databasePath ?? "", { readonly: true, fileMustExist: true });
      this.reader.pragma("busy_timeout = 2000");
    }
    return this.reader;
  }

  private closeReader(): void {
    try {
      this.reader?.close();
    } catch {
      // already closed
    }
    this.reader = undefined;
  }

  private track(promise: Promise<unknown>): void {
    this.inFlight.add(promise);
    void promise.finally(() => this.inFlight.delete(promise));
  }

  private nextTs(): string {
    this.tsCounter++;
    return `1710000000.${String(this.tsCounter).padStart(6, "0")}`;
  }
}
