import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UNPOSTED_GRACE_MS } from "../../src/engine/maintenance.js";
import { POST_CLAIM_TTL_MS } from "../../src/engine/turn-lease.js";
import { ZERO_USAGE } from "../../src/ports/model-client.js";
import { ask, FakeAnthropic, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { databaseBytes, LogCapture } from "../support/capture.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;
let now: number;

beforeEach(async () => {
  now = Date.UTC(2026, 10, 29, 12);
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  harness = new EngineHarness(fake, database.path, { clock: () => now });
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

const lastResult = () => JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content) as unknown;

describe("durability", () => {
  it("a restart between suspend and answer: a new engine on the same file resumes correctly", async () => {
    fake.script(ask({ type: "buttons", question: "Which?", options: ["left", "right"] }), reply("Right it is."));
    await harness.say("choose");
    const askId = harness.lastCard().askId;
    await harness.restart();
    expect(harness.adapter.cards).toHaveLength(1);
    expect(await harness.engine.answer(askId, OWNER, { kind: "option", index: 1 })).toEqual({ kind: "accepted" });
    await harness.engine.idle();
    expect(lastResult()).toEqual({ ok: true, value: "right" });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Right it is.");
  });

  it("an answer stored but never posted (a crash between the two) is posted at the next start, once", async () => {
    fake.script(reply("First answer."));
    await harness.say("hello");
    // A completed turn posts its answer and empties the outbox.
    expect(harness.adapter.messages.at(-1)).toMatchObject({ text: "First answer.", options: { replyKey: expect.any(String) } });
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    // What a SIGKILL right after the end step leaves: the turn over, its answer still in the outbox.
    const session = await harness.store.findSession(CONVERSATION);
    await harness.store.startTurnOrQueue(session!.id, { role: "user", content: [{ type: "text", text: "again" }] }, now);
    const answer = { role: "assistant" as const, content: [{ type: "text" as const, text: "Second answer." }] };
    // Its writer claimed the post, and died (on another host, so only the claim's end tells).
    const claim = { owner: "gone-host:4242:dead", until: now + 1000 };
    const pending = { key: `${session!.id}:2`, sessionId: session!.id, text: "Second answer." };
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    await harness.store.commitStep(session!.id, {
      messages: [answer],
      usage,
      end: { outcome: "completed", reply: { ...pending, claim } },
      now,
    });
    const posted = harness.adapter.messages.length;
    const writtenAt = now;
    now += 1000;
    await harness.restart();
    // With when it was written, so a platform can tell this answer from an earlier one with the same words.
    expect(harness.adapter.messages.slice(posted)).toEqual([
      { conversation: CONVERSATION, text: "Second answer.", options: { replyKey: pending.key, mayExist: true, writtenAt } },
    ]);
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    await harness.restart();
    expect(harness.adapter.messages).toHaveLength(posted + 1);
  });

  it("an answer the platform refused (an outage) stays in the outbox and the sweeper posts it once the outage ends", async () => {
    fake.script(reply("Outage answer."));
    harness.adapter.failMessages = 1;
    await harness.say("hello");
    expect(harness.adapter.messages.some((message) => message.text === "Outage answer.")).toBe(false);
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toHaveLength(1);
    // Within the grace the turn's own post has, the sweeper leaves it alone; after it, it posts once.
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(harness.adapter.messages.some((message) => message.text === "Outage answer.")).toBe(false);
    now += 11_000;
    await harness.engine.sweep();
    await harness.engine.idle();
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(harness.adapter.messages.filter((message) => message.text === "Outage answer.")).toHaveLength(1);
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it("two concurrent answers to one ask resume exactly once", async () => {
    fake.script(ask({ type: "confirm", question: "Go?" }), reply("Going."));
    await harness.say("go");
    const askId = harness.lastCard().askId;
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, index) => harness.engine.answer(askId, OWNER, { kind: "option", index: index % 2 })),
    );
    await harness.engine.idle();
    expect(outcomes.filter((outcome) => outcome.kind === "accepted")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.kind === "already-ended")).toHaveLength(9);
    expect(fake.requests).toHaveLength(2);
    expect(harness.adapter.messages.map((message) => message.text)).toEqual(["Going."]);
    expect(harness.adapter.settled).toHaveLength(1);
  });

  it("a tap racing the timeout sweeper has one winner", async () => {
    fake.script(ask({ type: "confirm", question: "Go?", timeout_s: 10 }), reply("Done."));
    await harness.say("go");
    now += 11_000;
    const [answer, swept] = await Promise.all([
      harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 }),
      harness.engine.sweep(),
    ]);
    await harness.engine.idle();
    expect(Number(answer.kind === "accepted") + swept).toBe(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("a card that was never posted (crash after the ask was written) is posted on start", async () => {
    harness.adapter.failCardPosts = 1;
    fake.script(ask({ type: "confirm", question: "Lost card?" }), reply("Found."));
    await harness.say("go");
    expect(harness.adapter.cards).toHaveLength(0);
    // The restarted engine runs in this same process, so the dead one's claim counts until it lapses.
    now += POST_CLAIM_TTL_MS;
    await harness.restart();
    expect(harness.adapter.cards.map((card) => card.spec.question)).toEqual(["Lost card?"]);
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    expect(harness.adapter.messages.at(-1)?.text).toBe("Found.");
  });

  it("a process that starts while another posts a card leaves it to the other: the writer's post claim says so", async () => {
    let release: () => void = () => {};
    harness.adapter.holdCardPosts = new Promise<void>((resolve) => (release = resolve));
    fake.script(ask({ type: "confirm", question: "Posted once?" }), reply("Once."));
    await harness.engine.handleMessage({ eventId: "E-fleet", conversation: CONVERSATION, author: OWNER, text: "go", addressedToBot: true });
    while ((await harness.store.findSession(CONVERSATION))?.status !== "waiting") await new Promise((resolve) => setTimeout(resolve, 5));
    // A second process on the same database starts while the first one's card post is in flight.
    const starting = new EngineHarness(fake, database.path, { clock: () => now });
    try {
      await starting.engine.recover();
      expect(starting.adapter.cards).toEqual([]);
      release();
      await harness.engine.idle();
      expect(harness.adapter.cards.map((card) => card.spec.question)).toEqual(["Posted once?"]);
      // The claim is the writer's until it lapses, and by then the card's reference is stored.
      await starting.engine.idle();
      now += UNPOSTED_GRACE_MS + 1;
      await starting.engine.sweep();
      await starting.engine.idle();
      expect(starting.adapter.cards).toEqual([]);
    } finally {
      release();
      await starting.close();
    }
  });

  it("a question nobody saw never times out: posted late, it gets its whole time from then", async () => {
    harness.adapter.failCardPosts = 1;
    fake.script(ask({ type: "confirm", question: "Seen in time?", timeout_s: 10 }), reply("Timed out fairly."));
    await harness.say("go");
    now += 60_000;
    expect(await harness.engine.sweep()).toBe(0);
    await harness.restart();
    const card = harness.lastCard();
    expect(card.spec.question).toBe("Seen in time?");
    expect(card.deadline).toBe(now + 10_000);
    expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
    now += 10_001;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.engine.idle();
    expect(harness.adapter.settled.at(-1)?.settlement.status).toBe("expired");
  });

  it.each([
    { onTheWayMs: 500, kept: true },
    { onTheWayMs: 1500, kept: false },
  ])("a card $onTheWayMs ms on its way keeps the deadline its ask was written with: $kept", async ({ onTheWayMs, kept }) => {
    // The clock moves between the write of the ask and its card's post, as a slow status line or platform would.
    const commit = harness.store.commitStep.bind(harness.store);
    harness.store.commitStep = async (sessionId, step) => {
      const result = await commit(sessionId, step);
      if (step.ask) now += onTheWayMs;
      return result;
    };
    fake.script(ask({ type: "confirm", question: "On time?", timeout_s: 10 }), reply("Fine."));
    const written = now;
    await harness.say("go");
    const deadline = kept ? written + 10_000 : written + onTheWayMs + 10_000;
    const card = harness.lastCard();
    expect(card.deadline).toBe(deadline);
    expect((await harness.store.getAsk(card.askId))?.deadline).toBe(deadline);
  });

  it("a card answered while it was being posted is settled as soon as it lands", async () => {
    let release: () => void = () => {};
    harness.adapter.holdCardPosts = new Promise<void>((resolve) => (release = resolve));
    fake.script(ask({ question: "Which branch?", candidates: ["main", "dev"] }), reply("OK."));
    const message = { eventId: "E-race", conversation: CONVERSATION, author: OWNER, text: "build", addressedToBot: true };
    await harness.engine.handleMessage(message);
    while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    while (!(await harness.store.findSession(CONVERSATION))?.status.startsWith("waiting"))
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await harness.engine.handleMessage({ ...message, eventId: "E-reply", text: "dev", addressedToBot: false })).toBe("answered");
    release();
    await harness.engine.idle();
    expect(harness.adapter.cards).toHaveLength(1);
    expect(harness.adapter.settled.map((entry) => entry.settlement)).toEqual([{ status: "answered", answerText: "dev", by: OWNER.id }]);
  });

  it("a card whose settle was lost to a crash or an error is settled again on start", async () => {
    fake.script(ask({ type: "confirm", question: "Merge?" }), reply("Merged."));
    await harness.say("merge");
    harness.adapter.failSettles = 1;
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    expect(harness.adapter.settled).toHaveLength(0);
    await harness.restart();
    expect(harness.adapter.settled.map((entry) => entry.settlement)).toEqual([{ status: "answered", answerText: "Yes", by: OWNER.id }]);
  });

  it("a card whose post failed is posted again by the sweeper, without a restart", async () => {
    harness.adapter.failCardPosts = 1;
    fake.script(ask({ type: "confirm", question: "Retry me?" }));
    await harness.say("go");
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(harness.adapter.cards).toHaveLength(0);
    now += 11_000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(harness.adapter.cards.map((card) => card.spec.question)).toEqual(["Retry me?"]);
  });

  it("a card or answer its turn is slow to post (a platform answering slowly) is not posted beside it by this process's sweeper", async () => {
    let release: () => void = () => {};
    harness.adapter.holdCardPosts = new Promise<void>((resolve) => (release = resolve));
    fake.script(ask({ type: "confirm", question: "Slow status?" }), reply("Slow answer."));
    const say = (eventId: string, text: string) =>
      harness.engine.handleMessage({ eventId, conversation: CONVERSATION, author: OWNER, text, addressedToBot: true });
    const settledBy = async (check: () => Promise<boolean>) => {
      while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await say("E-slow-1", "go");
    await settledBy(async () => (await harness.store.findSession(CONVERSATION))?.status === "waiting");
    // The card's post is under way; the sweep comes when the unposted card is old enough to look lost.
    now += UNPOSTED_GRACE_MS + 1;
    await harness.engine.sweep();
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await harness.engine.idle();
    expect(harness.adapter.cards.map((card) => card.spec.question)).toEqual(["Slow status?"]);

    harness.adapter.holdMessages = new Promise<void>((resolve) => (release = resolve));
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await settledBy(async () => (await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).length > 0);
    now += UNPOSTED_GRACE_MS + 1;
    await harness.engine.sweep();
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    await harness.engine.idle();
    expect(harness.adapter.messages.filter((message) => message.text === "Slow answer.")).toHaveLength(1);
  });

  it("a turn interrupted mid-model-call is re-run from the last persisted message on start", async () => {
    const session = await harness.store.createSession({ id: "S-crash", conversation: CONVERSATION, ownerId: OWNER.id, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "[alice] what time is it?" }] }, now);
    fake.script(reply("Noon."));
    await harness.restart();
    expect(harness.adapter.messages.at(-1)?.text).toBe("Noon.");
    expect(JSON.stringify(fake.requests[0]?.body.messages)).toContain("what time is it?");
  });

  it("a turn that keeps getting interrupted is failed visibly after bounded retries", async () => {
    const session = await harness.store.createSession({ id: "S-loop", conversation: CONVERSATION, ownerId: OWNER.id, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "crashy" }] }, now);
    for (let attempt = 0; attempt < 2; attempt++) await harness.store.countRecovery(session.id);
    await harness.restart();
    expect(fake.requests).toHaveLength(0);
    expect(harness.adapter.messages.at(-1)?.text).toContain("interrupted 3 times");
    expect((await harness.store.getSession(session.id))?.status).toBe("failed");
  });

  it("a turn given up with tool calls open closes each one, so the person's next message reaches the model whole", async () => {
    const session = await harness.store.createSession({ id: "S-tools", conversation: CONVERSATION, ownerId: OWNER.id, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "deploy and notify" }] }, now);
    const deploy = { type: "tool_use" as const, id: "toolu_deploy", name: "ops__deploy", input: { service: "web" } };
    const notify = { type: "tool_use" as const, id: "toolu_notify", name: "ops__notify", input: { to: "team" } };
    await harness.store.commitStep(session.id, { messages: [{ role: "assistant", content: [deploy, notify] }], usage: ZERO_USAGE, now });
    // The crash came while deploy was running: the journal saw it start; notify was never sent.
    await harness.store.startToolCall({ sessionId: session.id, toolUseId: deploy.id, name: deploy.name, argumentsHash: "h", now });
    for (let attempt = 0; attempt < 2; attempt++) await harness.store.countRecovery(session.id);
    await harness.restart();
    expect((await harness.store.getSession(session.id))?.status).toBe("failed");
    expect((await harness.store.loadMessages(session.id)).at(-1)).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: deploy.id,
          content:
            "interrupted: Parley restarted while ops__deploy was running, then gave the turn up; it may or may not have taken effect",
          is_error: true,
        },
        { type: "tool_result", tool_use_id: notify.id, content: "cancelled: the turn was given up before this call ran", is_error: true },
      ],
    });
    fake.script(reply("Let me check whether web was deployed."));
    await harness.say("did it deploy?");
    expect(harness.adapter.messages.at(-1)?.text).toBe("Let me check whether web was deployed.");
  });

  it("a redelivered event is processed once", async () => {
    fake.script(reply("Once."), reply("Twice?"));
    const message = { eventId: "Ev-same", conversation: CONVERSATION, author: OWNER, text: "hi", addressedToBot: true };
    expect(await harness.engine.handleMessage(message)).toBe("started");
    expect(await harness.engine.handleMessage(message)).toBe("duplicate");
    await harness.engine.idle();
    expect(await harness.engine.handleMessage(message)).toBe("duplicate");
    expect(fake.requests).toHaveLength(1);
  });
});

describe("who may answer", () => {
  it("someone else's tap or reply consumes nothing and they are told privately who may answer", async () => {
    fake.script(ask({ type: "confirm", question: "Merge?" }), reply("Merged."));
    await harness.say("merge");
    const askId = harness.lastCard().askId;
    const stranger = { id: "U_BOB", name: "bob" };
    expect(await harness.engine.answer(askId, stranger, { kind: "option", index: 0 })).toMatchObject({ kind: "not-allowed" });
    expect(await harness.say("yes", { author: stranger, addressedToBot: false })).toBe("rejected");
    expect(harness.adapter.notices).toEqual([{ userId: "U_BOB", text: "Only <@U_OWNER> or an admin can answer or stop this." }]);
    expect((await harness.store.getAsk(askId))?.status).toBe("pending");
    expect(await harness.engine.answer(askId, { id: "U_ADMIN" }, { kind: "option", index: 0 })).toEqual({ kind: "accepted" });
    await harness.engine.idle();
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ by: "U_ADMIN", byAdmin: true });
  });

  it("a reply in the thread from the owner answers the pending ask as free text", async () => {
    fake.script(ask({ question: "Which branch?", candidates: ["main", "dev"] }), reply("OK."));
    await harness.say("build");
    expect(await harness.say("feature/x", { addressedToBot: false })).toBe("answered");
    expect(lastResult()).toEqual({ ok: true, value: "feature/x", other: true });
  });

  it("ANSWER_POLICY=thread lets anyone in the thread answer", async () => {
    await harness.close();
    harness = new EngineHarness(fake, database.path, { settings: { answerPolicy: "thread" } });
    fake.script(ask({ type: "confirm", question: "Lunch?" }), reply("Booked."));
    await harness.say("book lunch");
    expect(harness.lastCard().anyoneInThread).toBe(true);
    expect(await harness.engine.answer(harness.lastCard().askId, { id: "U_CAROL" }, { kind: "option", index: 0 })).toEqual({
      kind: "accepted",
    });
  });
});

describe("secrets", () => {
  it("a password answer reaches the model and appears nowhere in the database file or the logs", async () => {
    const secret = "pa55-Zebra-Quartz-9981";
    const capture = new LogCapture();
    await harness.close();
    harness = new EngineHarness(fake, database.path, { logger: capture.logger });
    fake.script(
      ask({
        type: "form",
        question: "Credentials",
        fields: [
          { name: "user", label: "User", type: "text", required: true },
          { name: "password", label: "Password", type: "password", required: true },
        ],
      }),
      (request) => {
        expect(JSON.stringify(request.body.messages)).toContain(secret);
        return ask({ type: "confirm", question: "Also rotate it?" });
      },
      reply("All set."),
    );
    await harness.say("log in");
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "form", values: { user: "ops", password: secret } });
    await harness.engine.idle();
    expect(lastResult()).toEqual({ ok: true, value: { user: "ops", password: secret } });
    expect(harness.adapter.settled.at(-1)?.settlement.answerText).toBe("User: ops, Password: ••••");

    // A later resume rebuilds the history from the store: the model then sees the mask, never the secret.
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 1 });
    await harness.engine.idle();
    expect(JSON.stringify(fake.requests.at(-1)?.body.messages)).not.toContain(secret);
    expect(JSON.stringify(fake.requests.at(-1)?.body.messages)).toContain("••••");

    await harness.close();
    const stored = databaseBytes(database.path);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.includes(Buffer.from(secret))).toBe(false);
    expect(capture.text.length).toBeGreaterThan(0);
    expect(capture.text).not.toContain(secret);
  });
});
