import Database from "better-sqlite3";
import type { FakeDiscord } from "../fakes/fake-discord.js";
import { LET_EXPIRE } from "./chaos-model.js";
import { customIdsOf } from "./discord-proxy.js";
import { DISCORD_ADMIN, DISCORD_OWNER, DISCORD_STRANGER } from "./discord-rig.js";
import type { AskRow, SessionRow } from "./invariants.js";
import { sleep } from "./slack-proxy.js";

/** A message the bot must have stored by then: this long after it was sent and after the bot was ready. */
const LOST_AFTER_MS = 10_000;
/** A follow-up chosen for a finished session waits this long for a kill to send it while the bot is down. */
const FOLLOW_UP_WAIT_MS = 4000;
const ANSWER_ID = /:opt:\d+$|:continue$/;

interface DrivenSession {
  label: string;
  /** The thread: Discord gives a thread the id of the mention it was started from. */
  thread: string;
  /** The newest message the bot must store for this session, when it was sent, and the history length before it. */
  awaited: { id: string; at: number; baseCount: number } | undefined;
  followUp: "undecided" | "none" | "due" | "sent";
  dueAt: number;
  retries: number;
  lastRetryAt: number;
  done: boolean;
}

export interface DiscordDriverCounts {
  sessionsStarted: number;
  mentionsSent: number;
  followUpsSent: number;
  sentWhileDown: number;
  lostMessagesSeen: number;
  taps: number;
  doubleTaps: number;
  strangerTaps: number;
  staleTaps: number;
  cancelTaps: number;
  adminRetries: number;
}

/**
 * Plays the people on the fake Discord: mentions the bot in the channel (a thread per session), replies once more
 * in some finished threads, taps the cards it finds live (the owner, sometimes twice at once, sometimes a
 * stranger), leaves `[let-expire]` asks alone, and asks an admin to `/parley retry` failed sessions. Messages go
 * out whether the bot is up or not (those sent while it is down must be caught up on start); taps and commands
 * only while the gateway is connected, since Discord fails an interaction nobody receives.
 */
export class DiscordChaosDriver {
  readonly sessions = new Map<string, DrivenSession>();
  /** Action ids the owner tapped per ask (any tap that may have reached the bot). */
  readonly taps = new Map<string, string[]>();
  /** Interaction ids of the owner's Approve taps, so a trap can catch their acknowledgement. */
  readonly approveInteractions = new Set<string>();
  readonly counts: DiscordDriverCounts = {
    sessionsStarted: 0,
    mentionsSent: 0,
    followUpsSent: 0,
    sentWhileDown: 0,
    lostMessagesSeen: 0,
    taps: 0,
    doubleTaps: 0,
    strangerTaps: 0,
    staleTaps: 0,
    cancelTaps: 0,
    adminRetries: 0,
  };
  /** Called once right after the next message the gateway delivered to a connected bot. */
  afterDelivery: (() => void) | undefined;
  draining = false;
  private reader: Database.Database | undefined;
  private readonly lastTap = new Map<string, number>();
  /** The card message and one answer of every ask tapped, for stale taps later. */
  private readonly cardMessages = new Map<string, { messageId: string; answer: string }>();
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly options: {
      discord: FakeDiscord;
      databasePath: string;
      activeSessions: number;
      /** When the running bot became ready (Discord connected), or undefined while it is down or starting. */
      readySince: () => number | undefined;
      random: () => number;
    },
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          this.tick();
        } catch {
          // The database may be mid-recovery under us; the next tick reads again.
          this.closeReader();
        }
        await sleep(120);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.closeReader();
  }

  /** True when every session ended (idle after its last message, or failed after the admin gave up). */
  settled(): boolean {
    return [...this.sessions.values()].every((session) => session.done);
  }

  /** Called while the bot is dead: a new mention, and a follow-up that was due, both for the catch-up to find. */
  actWhileDown(): void {
    if (!this.draining && this.options.random() < 0.5) this.startSession(true);
    const due = [...this.sessions.values()].find((session) => session.followUp === "due");
    if (due) this.sendFollowUp(due, true);
  }

  private tick(): void {
    const now = Date.now();
    const readySince = this.options.readySince();
    const db = this.db();
    const rows = db.prepare("SELECT * FROM sessions WHERE platform = 'discord'").all() as SessionRow[];
    const byThread = new Map(rows.map((row) => [row.thread, row]));
    const pending = db.prepare("SELECT * FROM asks WHERE status = 'pending'").all() as AskRow[];
    const pendingBySession = new Map(pending.map((ask) => [ask.session_id, ask]));

    for (const session of this.sessions.values()) {
      if (session.done) continue;
      const row = byThread.get(session.thread);
      const awaited = session.awaited;
      if (awaited && (row?.message_count ?? 0) <= awaited.baseCount) {
        // Not stored yet. Lost once a ready bot had all this time to store or catch it up: the person says it again.
        if (readySince !== undefined && now - Math.max(awaited.at, readySince) > LOST_AFTER_MS) {
          this.counts.lostMessagesSeen++;
          if (awaited.baseCount === 0) this.mention(session, false);
          else this.sendFollowUp(session, false);
        }
        continue;
      }
      session.awaited = undefined;
      if (!row) continue;
      if (row.status === "idle" && row.last_outcome === "completed") {
        this.finished(session, now);
        continue;
      }
      if (readySince === undefined || !this.options.discord.gateway.connected) continue;
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
      for (let index = active; index < this.options.activeSessions; index++) this.startSession(false);
      if (readySince !== undefined && this.options.random() < 0.05) this.staleTap(new Set(pending.map((ask) => ask.id)));
    }
  }

  /** A finished turn: done, or (once per session) a follow-up in the thread, sent soon or while the bot is down. */
  private finished(session: DrivenSession, now: number): void {
    if (session.followUp === "undecided") {
      session.followUp = !this.draining && this.options.random() < 0.4 ? "due" : "none";
      session.dueAt = now + FOLLOW_UP_WAIT_MS;
    }
    if (session.followUp === "due" && now > session.dueAt) this.sendFollowUp(session, false);
    else if (session.followUp !== "due") session.done = true;
  }

  private startSession(whileDown: boolean): void {
    const label = `s${++this.counts.sessionsStarted}`;
    const session: DrivenSession = {
      label,
      thread: "",
      awaited: undefined,
      followUp: "undecided",
      dueAt: 0,
      retries: 0,
      lastRetryAt: 0,
      done: false,
    };
    this.sessions.set(label, session);
    this.mention(session, whileDown);
  }

  /** A mention in the channel; the bot opens a thread on it. Said again after a loss, it opens a new one. */
  private mention(session: DrivenSession, whileDown: boolean): void {
    this.counts.mentionsSent++;
    const id = this.say(`please deploy chaos:${session.label}`, { mentionBot: true }, whileDown);
    session.thread = id;
    session.awaited = { id, at: Date.now(), baseCount: 0 };
  }

  /** The owner writes once more in a finished thread: a new turn, whose answer is another final message. */
  private sendFollowUp(session: DrivenSession, whileDown: boolean): void {
    const row = this.db().prepare("SELECT message_count FROM sessions WHERE thread = ?").get(session.thread) as
      | { message_count: number }
      | undefined;
    this.counts.followUpsSent++;
    const id = this.say(`and once more, chaos:${session.label}`, { channelId: session.thread }, whileDown);
    session.followUp = "sent";
    session.awaited = { id, at: Date.now(), baseCount: row?.message_count ?? 0 };
  }

  private say(content: string, options: { mentionBot?: boolean; channelId?: string }, whileDown: boolean): string {
    const { discord } = this.options;
    const delivered = discord.gateway.connected;
    if (whileDown || !delivered) this.counts.sentWhileDown++;
    const id = discord.say(DISCORD_OWNER, content, options);
    if (delivered && this.afterDelivery) {
      const hook = this.afterDelivery;
      this.afterDelivery = undefined;
      hook();
    }
    return id;
  }

  /** `/parley retry` by a server admin. */
  private adminRetry(session: DrivenSession, row: SessionRow): void {
    session.lastRetryAt = Date.now();
    session.retries++;
    this.counts.adminRetries++;
    this.options.discord.command(DISCORD_ADMIN, `retry ${row.id}`);
  }

  private maybeTap(ask: AskRow, now: number): void {
    const spec = JSON.parse(ask.spec) as { question: string; type: string };
    if (spec.question.startsWith(LET_EXPIRE)) return;
    if (now - (this.lastTap.get(ask.id) ?? 0) < 1500) return;
    const messageId = (JSON.parse(ask.card_ref ?? "{}") as { messageId?: string }).messageId ?? "";
    const ids = customIdsOf(this.options.discord.message(messageId)?.components);
    // A card shows the ask's controls until it is settled; the driver taps only what a person would see.
    if (!ids.some((id) => id.startsWith(`ask:${ask.id}:`))) return;
    this.lastTap.set(ask.id, now);
    const random = this.options.random;
    const answers = ids.filter((id) => ANSWER_ID.test(id));
    if (answers[0]) this.cardMessages.set(ask.id, { messageId, answer: answers[0] });
    const pick = () => {
      if (random() < 0.08 || answers.length === 0) return `ask:${ask.id}:cancel`;
      return answers[Math.floor(random() * answers.length)] ?? `ask:${ask.id}:cancel`;
    };
    if (random() < 0.05) {
      this.counts.strangerTaps++;
      this.tap(ask.id, messageId, pick(), false);
    }
    const double = random() < 0.15;
    if (double) this.counts.doubleTaps++;
    this.tap(ask.id, messageId, pick(), true, spec.type === "approval");
    if (double) this.tap(ask.id, messageId, pick(), true, spec.type === "approval");
  }

  /** A tap on a card whose ask already ended (a person looking at a stale screen): it must change nothing. */
  private staleTap(pending: ReadonlySet<string>): void {
    const ended = [...this.cardMessages.keys()].filter((askId) => !pending.has(askId));
    const askId = ended[Math.floor(this.options.random() * ended.length)];
    const card = askId ? this.cardMessages.get(askId) : undefined;
    if (!askId || !card) return;
    this.counts.staleTaps++;
    this.tap(askId, card.messageId, card.answer, true);
  }

  private tap(askId: string, messageId: string, customId: string, byOwner: boolean, approval = false): void {
    const message = this.options.discord.message(messageId);
    if (!message) return;
    this.counts.taps++;
    if (byOwner && customId.endsWith(":cancel")) this.counts.cancelTaps++;
    if (byOwner) this.taps.set(askId, [...(this.taps.get(askId) ?? []), customId]);
    const interactionId = this.options.discord.click(byOwner ? DISCORD_OWNER : DISCORD_STRANGER, message, customId);
    // Approve is option 0 of an approval card.
    if (approval && byOwner && customId.endsWith(":opt:0")) this.approveInteractions.add(interactionId);
  }

  private db(): Database.Database {
    if (!this.reader) {
      this.reader = new Database(this.options.databasePath, { readonly: true, fileMustExist: true });
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
}
