import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadMigrations } from "../../db/postgres/migrate.js";
import { ApiClient } from "../api/api-client.js";
import { ask, lastToolResults, type RecordedRequest, reply, type ScriptedTurn, text } from "../fakes/fake-anthropic.js";
import { ALICE, CAROL_ADMIN, Fleet, sleep, until } from "./fleet-rig.js";

interface SessionRow {
  id: string;
  thread: string;
  status: string;
  last_outcome: string | null;
  lease_owner: string | null;
  stop_requested: boolean;
}

interface AskRow {
  id: string;
  session_id: string;
  tool_use_id: string;
  status: string;
  answered_by: string | null;
  card_ref: string | null;
}

let fleet: Fleet;

beforeEach(async () => {
  fleet = await new Fleet().open();
});

afterEach(async (context) => {
  const failed = context.task.result?.state === "fail" || (context.task.result?.errors?.length ?? 0) > 0;
  if (failed) process.stderr.write(`\n${fleet.logs()}\n`);
  timing(`launch of ${fleet.bots.length} bots`, fleet.launchMs);
  await fleet.close(failed);
});

async function sessionOf(thread: string): Promise<SessionRow | undefined> {
  return (await fleet.rows<SessionRow>("SELECT * FROM sessions WHERE thread = $1", [thread]))[0];
}

async function asksOf(thread: string): Promise<AskRow[]> {
  return fleet.rows<AskRow>("SELECT asks.* FROM asks JOIN sessions ON sessions.id = asks.session_id WHERE sessions.thread = $1", [thread]);
}

async function auditOf(askId: string): Promise<string[]> {
  return (await fleet.rows<{ action: string }>("SELECT action FROM audit WHERE target = $1 ORDER BY id", [askId])).map((row) => row.action);
}

/** A thread where bot `to` started the turn and suspended on a confirm card: the card and its ask row. */
async function suspendedThread(
  to: number,
  question: string,
): Promise<{ thread: string; card: ReturnType<Fleet["cards"]>[number]; row: AskRow }> {
  const thread = await fleet.mention(`please ${question}`, { to });
  await until(() => fleet.cards(thread).length === 1, "the card");
  await until(async () => (await sessionOf(thread))?.status === "waiting", "the session waiting on its ask");
  const card = fleet.cards(thread)[0]!;
  const [row] = await asksOf(thread);
  expect(row).toMatchObject({ id: card.askId, status: "pending" });
  return { thread, card, row: row! };
}

/** The bots the requests routed since `index` went to, sorted. */
function targetsSince(index: number): number[] {
  return fleet.proxy.routed
    .slice(index)
    .map((entry) => entry.target)
    .sort();
}

/** With FLEET_TIMINGS=1, a measured duration on stderr (for reading a run, never asserted here). */
function timing(what: string, value: number | string): void {
  if (process.env.FLEET_TIMINGS) process.stderr.write(`fleet timing: ${what}: ${typeof value === "number" ? `${value} ms` : value}\n`);
}

function resultOf(request: RecordedRequest | undefined): unknown {
  return JSON.parse(lastToolResults(request)[0]?.content ?? "null");
}

describe("a fleet of Parley processes on one PostgreSQL schema", () => {
  it("migrations racing: three processes started at once on an empty schema all become healthy, each migration applied once", async () => {
    expect(await fleet.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [fleet.schema])).toEqual([]);
    await fleet.launch(3);
    for (const bot of fleet.bots) {
      const ready = await fetch(`http://127.0.0.1:${bot.port}/readyz`);
      expect(ready.status, `bot ${bot.label} /readyz`).toBe(200);
      await ready.text();
      expect(bot.process.exits).toEqual([]);
    }
    const applied = await fleet.rows<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version");
    expect(applied).toEqual(loadMigrations().map((migration) => ({ version: migration.version, name: migration.name })));
    const tables = await fleet.rows<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [
      fleet.schema,
    ]);
    expect(tables.map((row) => row.table_name)).toEqual(expect.arrayContaining(["sessions", "messages", "asks", "audit", "api_asks"]));
  }, 60_000);

  it("an ask posted by bot A and tapped on bot B resumes the turn exactly once", async () => {
    fleet.anthropic.script(ask({ type: "confirm", question: "Deploy build 812 to production?" }), reply("Deployed build 812."));
    await fleet.launch(2);
    const { thread, card, row } = await suspendedThread(0, "deploy build 812");
    expect(fleet.botOf(fleet.anthropic.requests[0]!)).toBe("A");

    fleet.proxy.sendNextTo(1);
    const tapped = await fleet.tap(card, "Yes");
    expect(tapped.status).toBe(200);
    await tapped.text();
    expect(fleet.proxy.routed.at(-1)).toMatchObject({ target: 1, path: "/slack/events" });

    const final = () => fleet.posts(thread).filter((call) => String(call.params.text).includes("Deployed build 812."));
    await until(() => final().length >= 1 && fleet.settles(card).length >= 1, "the final answer and the settled card");
    // Room for a second resume, a second answer or a second settle, should any process make one.
    await sleep(1000);

    expect(final()).toHaveLength(1);
    expect(fleet.settles(card)).toHaveLength(1);
    expect(String(fleet.settles(card)[0]!.params.text)).toContain(ALICE);
    const resumes = fleet.resumesOf(row.tool_use_id);
    expect(resumes).toHaveLength(1);
    expect(resultOf(resumes[0])).toEqual({ ok: true, value: true });
    // B took the answer, so B ran the rest of the turn.
    expect(fleet.botOf(resumes[0]!)).toBe("B");
    expect(fleet.anthropic.requests).toHaveLength(2);

    expect(await asksOf(thread)).toMatchObject([{ id: card.askId, status: "answered", answered_by: ALICE }]);
    expect(await auditOf(card.askId)).toEqual(["ask-answered"]);
    expect(await sessionOf(thread)).toMatchObject({ status: "idle", last_outcome: "completed", lease_owner: null });
    expect(fleet.ephemerals(ALICE)).toEqual([]);
  }, 60_000);

  it("double taps landing on two processes at once: one answer taken, the other click told it was already answered, one resume", async () => {
    fleet.anthropic.script(
      ask({ type: "confirm", question: "Roll back the payments service?" }),
      ask({ type: "confirm", question: "Page the on-call engineer too?" }),
      reply("Rolled back; paging as decided."),
    );
    await fleet.launch(2);
    const { thread, card, row } = await suspendedThread(0, "roll back payments");

    // Round 1: Alice's one tap delivered twice at the same moment (a double click, or Slack retrying), to A and to B.
    fleet.proxy.sendNextTo(0);
    let before = fleet.proxy.routed.length;
    const twice = await Promise.all([fleet.tap(card, "Yes"), fleet.tap(card, "Yes")]);
    for (const response of twice) expect(response.status).toBe(200);
    await Promise.all(twice.map((response) => response.text()));
    expect(targetsSince(before)).toEqual([0, 1]);
    await until(() => fleet.cards(thread).length === 2 && fleet.ephemerals(ALICE).length >= 1, "the next card and the notice");
    expect(fleet.ephemerals(ALICE)).toEqual(["This question was already answered."]);
    expect(await asksOf(thread)).toContainEqual(expect.objectContaining({ id: card.askId, status: "answered", answered_by: ALICE }));
    expect(await auditOf(card.askId)).toEqual(["ask-answered"]);

    // Round 2: Alice taps Yes and Carol (an admin) taps No at the same moment, on B and A.
    const second = fleet.cards(thread)[1]!;
    await until(async () => (await sessionOf(thread))?.status === "waiting", "the session waiting on the second ask");
    fleet.proxy.sendNextTo(1);
    before = fleet.proxy.routed.length;
    const rivals = await Promise.all([fleet.tap(second, "Yes", ALICE), fleet.tap(second, "No", CAROL_ADMIN)]);
    for (const response of rivals) expect(response.status).toBe(200);
    await Promise.all(rivals.map((response) => response.text()));
    expect(targetsSince(before)).toEqual([0, 1]);

    const final = () => fleet.posts(thread).filter((call) => String(call.params.text).includes("Rolled back; paging as decided."));
    await until(() => final().length >= 1 && fleet.settles(second).length >= 1, "the final answer and the settled card");
    const ended = (await asksOf(thread)).find((ask) => ask.id === second.askId)!;
    const winner = ended.answered_by!;
    expect([ALICE, CAROL_ADMIN]).toContain(winner);
    const loser = winner === ALICE ? CAROL_ADMIN : ALICE;
    const loserNotices = loser === ALICE ? 2 : 1;
    await until(() => fleet.ephemerals(loser).length >= loserNotices, "the losing click's notice");
    await sleep(1000);

    expect(ended).toMatchObject({ status: "answered" });
    expect(fleet.ephemerals(loser).at(-1)).toBe("This question was already answered.");
    expect(fleet.ephemerals(ALICE)).toHaveLength(loser === ALICE ? 2 : 1);
    expect(fleet.ephemerals(CAROL_ADMIN)).toHaveLength(loser === CAROL_ADMIN ? 1 : 0);
    for (const [seen, toolUseId, value] of [
      [card, row.tool_use_id, true],
      [second, ended.tool_use_id, winner === ALICE],
    ] as const) {
      const resumes = fleet.resumesOf(toolUseId);
      expect(resumes, `resumes after ${seen.askId}`).toHaveLength(1);
      expect(resultOf(resumes[0])).toEqual({ ok: true, value });
      expect(fleet.settles(seen)).toHaveLength(1);
    }
    expect(String(fleet.settles(second)[0]!.params.text)).toContain(winner);
    expect(await auditOf(second.askId)).toEqual(["ask-answered"]);
    expect(final()).toHaveLength(1);
    expect(fleet.anthropic.requests).toHaveLength(3);
    expect(await sessionOf(thread)).toMatchObject({ status: "idle", last_outcome: "completed" });
  }, 60_000);

  it("@Parley stop sent to B ends the turn A is running within about two seconds, and A posts nothing after", async () => {
    const MODEL_DELAY_MS = 3500;
    fleet.anthropic.script({ content: [text("Deployed anyway.")], stopReason: "end_turn", delayMs: MODEL_DELAY_MS });
    await fleet.launch(2);
    const thread = await fleet.mention("deploy everything", { to: 0 });
    await until(() => fleet.anthropic.requests.length === 1, "A's model call");
    const modelCalledAt = Date.now();
    expect(fleet.botOf(fleet.anthropic.requests[0]!)).toBe("A");
    expect(await sessionOf(thread)).toMatchObject({ status: "running" });

    const stopSentAt = Date.now();
    const stop = await fleet.threadMention(thread, "stop", { to: 1 });
    expect(stop.status).toBe(200);
    await stop.text();
    expect(fleet.proxy.routed.at(-1)).toMatchObject({ target: 1 });

    await until(async () => (await sessionOf(thread))?.status !== "running", "the turn to end", MODEL_DELAY_MS + 5000);
    const endedAfterMs = Date.now() - stopSentAt;
    timing("Stop on B to the turn's end on A", endedAfterMs);
    expect(await sessionOf(thread)).toMatchObject({ status: "idle", last_outcome: "cancelled" });
    expect(endedAfterMs, "from the Stop to the turn's end").toBeLessThan(2500);
    await until(() => fleet.posts(thread).some((call) => call.params.text === "⏹ Stopped."), "the Stopped notice");
    const postsAtStop = fleet.posts(thread).length;
    const writes = () => fleet.slack.calls.filter((call) => call.method === "chat.postMessage" || call.method === "chat.update");
    const writesAtStop = writes().length;

    // The slow model answers meanwhile: nothing of it may reach the thread.
    await sleep(Math.max(0, modelCalledAt + MODEL_DELAY_MS + 1000 - Date.now()));
    expect(fleet.posts(thread)).toHaveLength(postsAtStop);
    expect(writes()).toHaveLength(writesAtStop);
    expect(fleet.posts(thread).some((call) => String(call.params.text).includes("Deployed anyway"))).toBe(false);
    expect(fleet.anthropic.requests).toHaveLength(1);
    expect(await fleet.rows("SELECT key FROM pending_replies")).toEqual([]);
    expect(await sessionOf(thread)).toMatchObject({ status: "idle", last_outcome: "cancelled" });
  }, 60_000);

  it("the sweepers of three processes expire each ask once: one settle, one audit row, one resume per turn", async () => {
    const THREADS = 3;
    const turn: ScriptedTurn = (request) =>
      lastToolResults(request).length > 0
        ? reply("Nobody answered, so I left it alone.")
        : ask({ type: "confirm", question: "Start the release train?", timeout_s: 5 });
    fleet.anthropic.script(...Array.from({ length: THREADS * 2 }, () => turn));
    await fleet.launch(3);
    const threads: string[] = [];
    for (let index = 0; index < THREADS; index++) threads.push(await fleet.mention(`release train ${index}`, { to: index }));
    await until(() => threads.every((thread) => fleet.cards(thread).length === 1), "every card");
    const cards = threads.map((thread) => fleet.cards(thread)[0]!);

    const final = (thread: string) => fleet.posts(thread).filter((call) => String(call.params.text).includes("Nobody answered"));
    await until(
      () => threads.every((thread) => final(thread).length >= 1) && cards.every((card) => fleet.settles(card).length >= 1),
      "every ask to expire and its turn to end",
      25_000,
    );
    await sleep(1000);

    const resumedBy: string[] = [];
    for (const [index, thread] of threads.entries()) {
      const card = cards[index]!;
      const [row] = await asksOf(thread);
      expect(row).toMatchObject({ id: card.askId, status: "expired", answered_by: null });
      expect(await auditOf(card.askId)).toEqual(["ask-expired"]);
      expect(fleet.settles(card)).toHaveLength(1);
      expect(String(fleet.settles(card)[0]!.params.text)).toContain("Expired");
      const resumes = fleet.resumesOf(row!.tool_use_id);
      expect(resumes).toHaveLength(1);
      expect(resultOf(resumes[0])).toEqual({ ok: false, timeout: true });
      resumedBy.push(fleet.botOf(resumes[0]!));
      expect(final(thread)).toHaveLength(1);
      expect(await sessionOf(thread)).toMatchObject({ status: "idle", last_outcome: "completed" });
    }
    expect(fleet.anthropic.requests).toHaveLength(THREADS * 2);
    expect(resumedBy.every((label) => ["A", "B", "C"].includes(label))).toBe(true);
    timing("expired asks resumed by", resumedBy.join(" "));
    const late = await fleet.rows<{ late: number }>("SELECT ended_at - deadline AS late FROM asks ORDER BY late");
    timing("expiry after the deadline", late.map((row) => row.late).join(", "));
  }, 60_000);

  it("the API across processes: created on A, long-polled on B, tapped on C; the poll returns within 1.5 s, one callback", async () => {
    const receiver = await new Receiver().start();
    try {
      await fleet.launch(3);
      const api = new ApiClient(fleet.proxy.url);
      fleet.proxy.sendNextTo(0);
      const created = await api.create({
        channel: "slack:C_FLEET",
        ask: { type: "confirm", question: "Promote build 812?" },
        metadata: { build: 812 },
        callback_url: `${receiver.url}/hook`,
      });
      expect(created.status).toBe(201);
      expect(fleet.proxy.routed.at(-1)).toMatchObject({ target: 0, method: "POST" });
      const id = String(created.body.id);
      await until(() => fleet.cards().some((card) => card.askId === id), "the card");
      const card = fleet.cards().find((seen) => seen.askId === id)!;

      fleet.proxy.sendNextTo(1);
      const poll = api.get(id, 30);
      await until(() => fleet.proxy.routed.some((entry) => entry.path === `/v1/asks/${id}?wait=30`), "the long-poll to reach B");
      expect(fleet.proxy.routed.at(-1)).toMatchObject({ target: 1, method: "GET" });

      fleet.proxy.sendNextTo(2);
      const tappedAt = Date.now();
      const tapped = await fleet.tap(card, "Yes");
      expect(tapped.status).toBe(200);
      await tapped.text();
      expect(fleet.proxy.routed.at(-1)).toMatchObject({ target: 2, path: "/slack/events" });
      const answered = await poll;
      const pollLatencyMs = Date.now() - tappedAt;
      timing("tap on C to the long-poll's answer on B", pollLatencyMs);
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({
        id,
        status: "answered",
        result: { ok: true, value: true },
        answered_by: `slack:${ALICE}`,
        metadata: { build: 812 },
      });
      expect(pollLatencyMs, "from the tap on C to the long-poll's answer on B").toBeLessThan(1500);

      await until(() => receiver.deliveries.length >= 1, "the callback");
      await until(
        async () => (await fleet.rows("SELECT 1 FROM api_asks WHERE ask_id = $1 AND callback_done_at IS NOT NULL", [id])).length === 1,
        "the callback recorded as delivered",
      );
      // One attempt was ever taken (a compare-and-set in the database), and it is recorded done: no process can
      // deliver it again. A short wait still gives a stray second delivery the time to show.
      await sleep(1000);
      expect(receiver.deliveries).toHaveLength(1);
      expect(JSON.parse(receiver.deliveries[0]!)).toEqual(answered.body);
      expect(await fleet.rows("SELECT callback_attempts, callback_outcome FROM api_asks WHERE ask_id = $1", [id])).toEqual([
        { callback_attempts: 1, callback_outcome: "delivered" },
      ]);
      expect(await auditOf(id)).toEqual(["api-ask-created", "ask-answered"]);
      expect(fleet.settles(card)).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  }, 60_000);
});

/** A callback receiver that accepts every delivery and records its body. */
class Receiver {
  readonly deliveries: string[] = [];
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        this.deliveries.push(body);
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
