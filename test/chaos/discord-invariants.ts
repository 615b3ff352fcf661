import { rmSync } from "node:fs";
import Database from "better-sqlite3";
import type { RecordedRequest } from "../fakes/fake-anthropic.js";
import type { FakeDiscord } from "../fakes/fake-discord.js";
import type { RecordedSlackCall } from "../fakes/fake-slack-api.js";
import type { ModelCallRecord } from "./chaos-model.js";
import { type AnsweredDiscordCall, customIdsOf, discordCardAskId } from "./discord-proxy.js";
import { type CheckReport, checkInvariants } from "./invariants.js";

type Json = Record<string, unknown>;

export interface DiscordCheckInput {
  databasePath: string;
  discord: FakeDiscord;
  /** Every REST request the fake Discord answered (the chaos proxy's record). */
  restCalls: readonly AnsweredDiscordCall[];
  modelRequests: readonly RecordedRequest[];
  modelCalls: readonly ModelCallRecord[];
  taps: ReadonlyMap<string, readonly string[]>;
  owner: string;
  toolRecords: readonly string[];
}

/**
 * The crash suite's checks (invariants.ts) on a Discord run, plus what only Discord can lose: a user message that
 * Discord holds but the bot never stored. invariants.ts reads Slack's shape, so the Discord threads are presented
 * in it: every message a REST post created is a `chat.postMessage` (its components as an actions block, its thread
 * as `thread_ts`, its id as `ts`), each edit with components a `chat.update`, and every message then gets one more
 * `chat.update` showing what it shows now. A post that
 * Discord answered with an earlier message (the same `enforce_nonce` nonce) created nothing and is counted apart.
 */
export function checkDiscordRun(input: DiscordCheckInput): CheckReport {
  const { discord } = input;
  const created = new Set<string>();
  const calls: RecordedSlackCall[] = [];
  const stats = { cardPostRequests: 0, cardPostsAnsweredByNonce: 0, lostMentions: 0, lostReplies: 0, userMessages: 0 };
  for (const call of input.restCalls) {
    // An edit with components (a status line edited into a card, a settle) is shown as Slack's chat.update of it.
    const edited = call.verb === "PATCH" && call.status === 200 ? /^\/channels\/\d+\/messages\/(\d+)$/.exec(call.path)?.[1] : undefined;
    if (edited && created.has(edited) && call.body.components !== undefined) {
      calls.push(slackShaped("chat.update", { ts: edited, blocks: actionsBlocks(call.body.components) }, edited));
      continue;
    }
    if (call.verb !== "POST" || !/^\/channels\/\d+\/messages$/.test(call.path) || call.status !== 200) continue;
    const message = call.result as Json;
    const id = String(message.id);
    const isCard = discordCardAskId(call.body.components) !== undefined;
    if (isCard) stats.cardPostRequests++;
    if (created.has(id)) {
      if (isCard) stats.cardPostsAnsweredByNonce++;
      continue;
    }
    created.add(id);
    calls.push(
      slackShaped(
        "chat.postMessage",
        { blocks: actionsBlocks(message.components), text: message.content, thread_ts: message.channel_id },
        id,
      ),
    );
  }
  for (const id of created) calls.push(slackShaped("chat.update", { ts: id, blocks: actionsBlocks(discord.message(id)?.components) }, id));

  const copyPath = slackShapedCopy(input.databasePath);
  let report: CheckReport;
  try {
    report = checkInvariants({
      databasePath: copyPath,
      slackCalls: calls,
      modelRequests: input.modelRequests,
      modelCalls: input.modelCalls,
      taps: input.taps,
      owner: input.owner,
      toolRecords: input.toolRecords,
    });
  } finally {
    rmSync(copyPath, { force: true });
  }
  const integrity = integrityOf(input.databasePath);
  if (integrity !== "ok") report.violations.push(`PRAGMA integrity_check: ${integrity}`);

  // Every message a person addressed to the bot: mentions in the channel, and their messages in its threads.
  const claimed = claimedEvents(input.databasePath);
  const lost: string[] = [];
  const threads = new Set(discord.threadIds());
  const people = [...discord.messagesIn(discord.channelId), ...[...threads].flatMap((thread) => discord.messagesIn(thread))].filter(
    (message) => (message.author as Json).id === input.owner,
  );
  for (const message of people) {
    stats.userMessages++;
    if (claimed.has(`discord:message:${String(message.id)}`)) continue;
    const inThread = threads.has(String(message.channel_id));
    if (inThread) stats.lostReplies++;
    else stats.lostMentions++;
    lost.push(`${inThread ? "reply" : "mention"} ${String(message.id)} (${String(message.content).slice(0, 60)}) was never stored`);
  }
  const findings = report.findings.filter((finding) => !finding.includes("extra card post"));
  if (report.stats.duplicateCardPosts !== 0) findings.push(`${report.stats.duplicateCardPosts} extra card message(s) in the threads`);
  return {
    violations: report.violations,
    findings: [...findings, ...lost],
    stats: { ...report.stats, ...stats, integrityCheck: integrity },
  };
}

function slackShaped(method: string, params: Record<string, unknown>, ts: string): RecordedSlackCall {
  return { method, params, ok: true, result: { ok: true, ts } };
}

/** Components as one Slack actions block with their custom ids as action ids, which is all invariants.ts reads. */
function actionsBlocks(components: unknown): unknown[] {
  const ids = customIdsOf(components);
  return ids.length > 0 ? [{ type: "actions", elements: ids.map((id) => ({ action_id: id })) }] : [];
}

/**
 * A copy of the file (VACUUM INTO) in which each card reference reads as invariants.ts expects, Slack's
 * `{channel, ts}`, with Discord's message id as the `ts`; nothing else differs.
 */
function slackShapedCopy(databasePath: string): string {
  const copyPath = `${databasePath}.slack-shaped`;
  rmSync(copyPath, { force: true });
  const source = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    source.prepare("VACUUM INTO ?").run(copyPath);
  } finally {
    source.close();
  }
  const copy = new Database(copyPath);
  try {
    copy
      .prepare(
        `UPDATE asks SET card_ref = json_object('channel', json_extract(card_ref, '$.channelId'), 'ts', json_extract(card_ref, '$.messageId'))
         WHERE card_ref IS NOT NULL`,
      )
      .run();
  } finally {
    copy.close();
  }
  return copyPath;
}

function integrityOf(databasePath: string): string {
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((row) => row.integrity_check).join("; ");
  } finally {
    db.close();
  }
}

function claimedEvents(path: string): Set<string> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT event_id FROM processed_events WHERE event_id LIKE 'discord:message:%'").all() as Array<{
      event_id: string;
    }>;
    return new Set(rows.map((row) => row.event_id));
  } finally {
    db.close();
  }
}
