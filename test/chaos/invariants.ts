import Database from "better-sqlite3";
import type { RecordedRequest } from "../fakes/fake-anthropic.js";
import type { RecordedSlackCall } from "../fakes/fake-slack-api.js";
import { LET_EXPIRE, type ModelCallRecord } from "./chaos-model.js";
import { actionIdsOf } from "./slack-proxy.js";
import { checkToolInvariants, type ToolCallRow } from "./tool-invariants.js";

export interface AskRow {
  id: string;
  session_id: string;
  tool_use_id: string;
  spec: string;
  status: "pending" | "answered" | "cancelled" | "expired";
  card_ref: string | null;
  deadline: number;
  answer: string | null;
  answered_by: string | null;
  ended_at: number | null;
}

export interface SessionRow {
  id: string;
  thread: string;
  owner_id: string;
  status: "idle" | "running" | "waiting" | "failed";
  last_outcome: string | null;
  last_error: string | null;
  message_count: number;
  turn_count: number;
}

/** The chaos model's final answer (see chaos-model.ts). */
const FINAL_ANSWER_PREFIX = "All done for ";

export interface MessageRow {
  session_id: string;
  seq: number;
  role: "user" | "assistant";
  content: string;
}

type Block = { type: string; id?: string; tool_use_id?: string; content?: unknown; text?: string };

/** The stored rows the checks read: from the SQLite file, or loaded elsewhere (PostgreSQL, fleet-reader.ts). */
export interface StoredRows {
  /** `ok` when the store is sound (SQLite's integrity_check). */
  integrity: string;
  asks: AskRow[];
  sessions: SessionRow[];
  /** Ordered by session, then seq. */
  messages: MessageRow[];
  /** Only the `ask-…` actions. */
  audit: Array<{ target: string; action: string }>;
  toolCalls: ToolCallRow[];
}

export interface CheckInput {
  /** The SQLite file to read; or `rows` instead. */
  databasePath?: string;
  rows?: StoredRows;
  slackCalls: readonly RecordedSlackCall[];
  modelRequests: readonly RecordedRequest[];
  modelCalls: readonly ModelCallRecord[];
  /** Action ids the driver sent per ask (any tap that may have reached the bot). */
  taps: ReadonlyMap<string, readonly string[]>;
  owner: string;
  /** The chaos MCP server's record of tool runs (tool-invariants.ts). */
  toolRecords: readonly string[];
}

export interface CheckReport {
  violations: string[];
  /** Findings outside the five invariants, reported rather than asserted. */
  findings: string[];
  stats: Record<string, number | string>;
}

interface SpecShape {
  type: string;
  question: string;
  options: Array<{ value: string; label: string }>;
}

/**
 * Everything the chaos test asserts once the bot is stopped: the database file (opened read-only) against
 * what the fake Slack API and the fake model recorded.
 */
export function checkInvariants(input: CheckInput): CheckReport {
  const violations: string[] = [];
  const findings: string[] = [];
  const fail = (text: string) => {
    if (violations.length < 200) violations.push(text);
  };
  const { integrity, asks, sessions, messages, audit, toolCalls } = input.rows ?? readStoredRows(input.databasePath ?? "");

  // 5. The file is sound.
  if (integrity !== "ok") fail(`PRAGMA integrity_check: ${integrity}`);

  // What Slack saw: every card posted (by ts) and every update of a ts.
  const posts = postsOf(input.slackCalls);
  const postByTs = new Map(posts.map((call) => [String(call.result.ts), call]));
  const cardPostsByAsk = new Map<string, RecordedSlackCall[]>();
  for (const call of posts) {
    const askIds = new Set(
      actionIdsOf(call.params.blocks)
        .filter((id) => id.startsWith("ask:"))
        .map((id) => id.split(":")[1] ?? ""),
    );
    for (const askId of askIds) cardPostsByAsk.set(askId, [...(cardPostsByAsk.get(askId) ?? []), call]);
  }
  const updatesByTs = new Map<string, RecordedSlackCall[]>();
  for (const call of input.slackCalls) {
    if (call.method !== "chat.update" || !call.ok) continue;
    const ts = String(call.params.ts);
    updatesByTs.set(ts, [...(updatesByTs.get(ts) ?? []), call]);
  }
  /** A card is visible with live controls when it was posted and no later update took its controls away. */
  const liveCard = (askId: string, ts: string): boolean => {
    const post = postByTs.get(ts);
    if (!post || !actionIdsOf(post.params.blocks).some((id) => id.startsWith(`ask:${askId}:`))) return false;
    const last = updatesByTs.get(ts)?.at(-1);
    return !last || actionIdsOf(last.params.blocks).some((id) => id.startsWith(`ask:${askId}:`));
  };

  // The stored history: tool_use and tool_result blocks by tool_use_id.
  const storedUses = new Map<string, number>();
  const storedResults = new Map<string, string[]>();
  const bySession = new Map<string, MessageRow[]>();
  for (const row of messages) {
    bySession.set(row.session_id, [...(bySession.get(row.session_id) ?? []), row]);
    for (const block of JSON.parse(row.content) as Block[]) {
      if (block.type === "tool_use" && block.id) storedUses.set(block.id, (storedUses.get(block.id) ?? 0) + 1);
      if (block.type === "tool_result" && block.tool_use_id) {
        storedResults.set(block.tool_use_id, [...(storedResults.get(block.tool_use_id) ?? []), contentText(block.content)]);
      }
    }
  }
  for (const session of sessions) {
    const rows = bySession.get(session.id) ?? [];
    if (rows.length !== session.message_count) fail(`session ${session.id}: message_count ${session.message_count}, ${rows.length} rows`);
    rows.forEach((row, index) => {
      if (row.seq !== index) fail(`session ${session.id}: message seq ${row.seq} at position ${index}`);
    });
  }

  // What the model was sent: every tool_result per tool_use_id, and the requests that delivered it first-hand
  // (the tool_result is in the newest message), with the bot process that sent each.
  const epochOf = new Map(input.modelCalls.map((call) => [call.index, call.epoch]));
  const sentContents = new Map<string, Set<string>>();
  const deliveries = new Map<string, number[]>();
  input.modelRequests.forEach((request, index) => {
    const seenHere = new Map<string, number>();
    request.body.messages.forEach((message, position) => {
      if (typeof message.content === "string") return;
      for (const block of message.content as Block[]) {
        if (block.type !== "tool_result" || !block.tool_use_id) continue;
        const id = block.tool_use_id;
        seenHere.set(id, (seenHere.get(id) ?? 0) + 1);
        sentContents.set(id, (sentContents.get(id) ?? new Set()).add(contentText(block.content)));
        if (position === request.body.messages.length - 1) deliveries.set(id, [...(deliveries.get(id) ?? []), epochOf.get(index) ?? -1]);
      }
    });
    for (const [id, count] of seenHere) if (count > 1) fail(`model request ${index} carries ${count} tool_results for ${id}`);
  });

  const sessionById = new Map(sessions.map((session) => [session.id, session]));
  const askByToolUse = new Map(asks.map((ask) => [ask.tool_use_id, ask]));
  const auditByAsk = new Map<string, number>();
  for (const row of audit) auditByAsk.set(row.target, (auditByAsk.get(row.target) ?? 0) + 1);
  const stats = {
    asks: asks.length,
    answered: 0,
    cancelled: 0,
    expired: 0,
    pending: 0,
    sessions: sessions.length,
    sessionsIdle: 0,
    sessionsFailed: 0,
    sessionsWaiting: 0,
    redeliveredAfterCrash: 0,
    endedUndeliveredFailedSession: 0,
    duplicateCardPosts: 0,
    endedCardsLeftLive: 0,
    duplicateFinalAnswers: 0,
    lostFinalAnswers: 0,
    modelRequests: input.modelRequests.length,
  };

  for (const ask of asks) {
    const spec = JSON.parse(ask.spec) as SpecShape;
    const session = sessionById.get(ask.session_id);
    const results = storedResults.get(ask.tool_use_id) ?? [];
    const cardPosts = cardPostsByAsk.get(ask.id) ?? [];
    if (cardPosts.length > 1) stats.duplicateCardPosts += cardPosts.length - 1;
    if (!session) fail(`ask ${ask.id}: no session ${ask.session_id}`);
    if (storedUses.get(ask.tool_use_id) !== 1) fail(`ask ${ask.id}: its tool_use is stored ${storedUses.get(ask.tool_use_id) ?? 0} times`);

    // 2. Every card got posted: a card reference, and Slack saw that message with this ask's controls.
    const ref = ask.card_ref ? (JSON.parse(ask.card_ref) as { channel: string; ts: string }) : undefined;
    if (!ref) fail(`ask ${ask.id} (${ask.status}): no card reference; ${cardPosts.length} card post(s) seen by Slack`);
    else if (!postByTs.get(ref.ts) || !cardPosts.some((call) => String(call.result.ts) === ref.ts)) {
      fail(`ask ${ask.id}: card reference ${ref.ts} matches no chat.postMessage carrying its controls`);
    }

    if (ask.status === "pending") {
      stats.pending++;
      // 1. Pending: a posted, visible card, nothing stored as its result, no audit of an end.
      if (!ref || !liveCard(ask.id, ref.ts)) fail(`ask ${ask.id}: pending without a visible card`);
      if (results.length !== 0) fail(`ask ${ask.id}: pending, yet ${results.length} stored tool_result(s)`);
      if (auditByAsk.has(ask.id)) fail(`ask ${ask.id}: pending, yet audited as ended`);
      if (session && session.status !== "waiting") fail(`ask ${ask.id}: pending while its session is ${session.status}`);
      continue;
    }

    stats[ask.status]++;
    // 1. Ended exactly once: one end in the audit trail, one stored result, matching the status.
    if (ask.ended_at === null) fail(`ask ${ask.id}: ${ask.status} without ended_at`);
    if (auditByAsk.get(ask.id) !== 1) fail(`ask ${ask.id}: ${auditByAsk.get(ask.id) ?? 0} audited ends`);
    if (results.length !== 1) fail(`ask ${ask.id}: ${ask.status}, ${results.length} stored tool_results (want exactly 1)`);
    const stored = results[0];
    // An approval's result is the tool's own (or why it did not run): tool-invariants.ts checks it.
    const expected = spec.type === "approval" ? stored : expectedResult(ask);
    if (stored !== undefined && stored !== expected) fail(`ask ${ask.id}: stored result ${stored}, expected ${expected}`);

    // Nobody's answer but the driver's: the value is one the owner tapped, a cancel was tapped, expiry only when never answered.
    const tapped = input.taps.get(ask.id) ?? [];
    const letExpire = spec.question.startsWith(LET_EXPIRE);
    if (ask.status === "expired" && !letExpire) fail(`ask ${ask.id}: expired, yet the driver answers such asks`);
    if (ask.status !== "expired" && letExpire) fail(`ask ${ask.id}: ${ask.status}, yet nobody ever tapped it`);
    if (ask.status === "cancelled" && !tapped.some((id) => id.endsWith(":cancel"))) fail(`ask ${ask.id}: cancelled without a Cancel tap`);
    if (ask.status === "answered") {
      if (ask.answered_by !== input.owner) fail(`ask ${ask.id}: answered by ${ask.answered_by}, who may not answer`);
      const value = JSON.stringify((JSON.parse(ask.answer ?? "null") as { value?: unknown } | null)?.value);
      const allowed = new Set(tapped.map((id) => JSON.stringify(valueOfTap(spec, id))));
      if (!allowed.has(value)) fail(`ask ${ask.id}: answered ${value}, but the taps were ${[...allowed].join(", ") || "none"}`);
    }
    if (ref && liveCard(ask.id, ref.ts)) stats.endedCardsLeftLive++;

    // 3. The accepted answer reached the model exactly once: one distinct content per tool_use_id, equal to the
    // stored one, and never delivered twice by one bot process (a re-run after a crash resends the same history).
    const sent = sentContents.get(ask.tool_use_id) ?? new Set<string>();
    if (sent.size > 1) fail(`ask ${ask.id}: the model received ${sent.size} different results: ${[...sent].join(" | ")}`);
    if (stored !== undefined && sent.size === 1 && !sent.has(stored))
      fail(`ask ${ask.id}: the model received ${[...sent][0]}, stored ${stored}`);
    const epochs = deliveries.get(ask.tool_use_id) ?? [];
    if (new Set(epochs).size !== epochs.length) fail(`ask ${ask.id}: delivered twice by one bot process (epochs ${epochs.join(",")})`);
    if (epochs.length > 1) stats.redeliveredAfterCrash++;
    if (sent.size === 0) {
      if (session?.status === "failed") stats.endedUndeliveredFailedSession++;
      else fail(`ask ${ask.id}: ${ask.status}, but its result never reached the model (session ${session?.status})`);
    }
  }

  // Results for tool_use ids that are no ask: the model was never told anything the store does not know.
  for (const id of sentContents.keys()) if (!askByToolUse.has(id)) fail(`the model received a tool_result for unknown tool_use ${id}`);

  // 4. Every session is terminal, or waits on exactly one pending ask with a visible card.
  for (const session of sessions) {
    const pending = asks.filter((ask) => ask.session_id === session.id && ask.status === "pending");
    if (session.status === "idle") stats.sessionsIdle++;
    if (session.status === "failed") stats.sessionsFailed++;
    if (session.status === "waiting") {
      stats.sessionsWaiting++;
      const ask = pending[0];
      const ref = ask?.card_ref ? (JSON.parse(ask.card_ref) as { ts: string }) : undefined;
      if (pending.length !== 1 || !ask || !ref || !liveCard(ask.id, ref.ts)) {
        fail(`session ${session.id}: waiting with ${pending.length} pending ask(s) and no visible card`);
      }
    } else if (session.status === "running") fail(`session ${session.id}: left running`);
    else if (pending.length > 0) fail(`session ${session.id}: ${session.status} with ${pending.length} pending ask(s)`);
  }

  // Final answers: at most one per turn in each thread, and one in every thread whose last turn completed.
  const finalPostsByThread = new Map<string, number>();
  for (const call of posts) {
    if (!String(call.params.text ?? "").startsWith(FINAL_ANSWER_PREFIX)) continue;
    const thread = String(call.params.thread_ts);
    finalPostsByThread.set(thread, (finalPostsByThread.get(thread) ?? 0) + 1);
  }
  for (const session of sessions) {
    const finals = finalPostsByThread.get(session.thread) ?? 0;
    stats.duplicateFinalAnswers += Math.max(0, finals - session.turn_count);
    if (session.last_outcome === "completed" && finals === 0) stats.lostFinalAnswers++;
  }

  const toolStats = checkToolInvariants(
    { asks, toolCalls, records: input.toolRecords, storedResults, sessions: sessionById, owner: input.owner },
    fail,
  );

  if (stats.duplicateFinalAnswers > 0) findings.push(`${stats.duplicateFinalAnswers} final answer(s) posted more often than turns ran`);
  if (stats.lostFinalAnswers > 0) {
    findings.push(`${stats.lostFinalAnswers} completed turn(s) whose final answer never reached Slack (killed between commit and post)`);
  }
  if (stats.endedCardsLeftLive > 0) {
    findings.push(`${stats.endedCardsLeftLive} ended ask(s) whose card still shows live controls (the bot died between claim and settle)`);
  }
  if (stats.duplicateCardPosts > 0) {
    findings.push(
      `${stats.duplicateCardPosts} extra card post(s): Slack posted, the bot died before storing the ts, recovery posted again`,
    );
  }
  return { violations, findings, stats: { ...stats, ...toolStats } };
}

/** The rows the checks read, from the SQLite file (opened read-only). */
function readStoredRows(databasePath: string): StoredRows {
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    return {
      integrity: (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((row) => row.integrity_check).join("; "),
      asks: db.prepare("SELECT * FROM asks").all() as AskRow[],
      sessions: db.prepare("SELECT * FROM sessions").all() as SessionRow[],
      messages: db.prepare("SELECT session_id, seq, role, content FROM messages ORDER BY session_id, seq").all() as MessageRow[],
      audit: db.prepare("SELECT target, action FROM audit WHERE action LIKE 'ask-%'").all() as Array<{ target: string; action: string }>,
      toolCalls: db.prepare("SELECT session_id, tool_use_id, name, status FROM tool_calls").all() as ToolCallRow[],
    };
  } finally {
    db.close();
  }
}

/** A tool_result's content as text: ask_user's JSON string, or a tool's text blocks joined. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return String(content);
  return content.map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : `[${part.type}]`)).join("");
}

function expectedResult(ask: AskRow): string {
  if (ask.status === "cancelled") return JSON.stringify({ ok: false, cancelled: true });
  if (ask.status === "expired") return JSON.stringify({ ok: false, timeout: true });
  const answer = JSON.parse(ask.answer ?? "null") as { value: unknown; other?: true } | null;
  return JSON.stringify(answer?.other ? { ok: true, value: answer.value, other: true } : { ok: true, value: answer?.value });
}

/** The value a tap on `actionId` answers with, read from the stored spec. */
function valueOfTap(spec: SpecShape, actionId: string): unknown {
  if (actionId.endsWith(":continue")) return "acknowledged";
  const index = /:opt:(\d+)$/.exec(actionId)?.[1];
  if (index === undefined) return undefined;
  if (spec.type === "confirm") return index === "0";
  if (spec.type === "approval") return { decision: index === "0" ? "approve" : "deny" };
  return spec.options[Number(index)]?.value;
}

/**
 * Every message as Slack first showed it: the posts, and a status line edited into what the turn said next (a card,
 * an answer) counted as posted then, with that content, since that is when a person first saw it.
 */
export function postsOf(calls: readonly RecordedSlackCall[]): RecordedSlackCall[] {
  const statusThreads = new Map<string, unknown>();
  const posts: RecordedSlackCall[] = [];
  // A status line has Stop and nothing else: a waiting card has Stop too, beside its ask's controls.
  const isStatus = (call: RecordedSlackCall) => {
    const ids = actionIdsOf(call.params.blocks);
    return ids.some((id) => id.startsWith("stop:")) && !ids.some((id) => id.startsWith("ask:"));
  };
  for (const call of calls) {
    if (!call.ok) continue;
    const ts = String(call.method === "chat.update" ? call.params.ts : call.result.ts);
    if (call.method === "chat.postMessage") {
      posts.push(call);
      if (isStatus(call)) statusThreads.set(ts, call.params.thread_ts);
    } else if (call.method === "chat.update" && statusThreads.has(ts) && !isStatus(call)) {
      posts.push({
        ...call,
        method: "chat.postMessage",
        params: { ...call.params, thread_ts: statusThreads.get(ts) },
        result: { ...call.result, ts },
      });
      statusThreads.delete(ts);
    }
  }
  return posts;
}
