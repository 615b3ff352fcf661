import { describe, expect, it } from "vitest";
import { parseAskSpec } from "../../src/ask/spec.js";
import type { Platform } from "../../src/ports/ids.js";
import type { Storage } from "../../src/ports/maintenance-store.js";
import type { ChatMessage } from "../../src/ports/model-client.js";
import type { ConversationRef, SessionStatus } from "../../src/ports/session-store.js";
import { SESSION_TRANSITIONS, type SessionEvent } from "../../src/store/transitions.js";

const CONVERSATION: ConversationRef = { platform: "slack", workspace: "T1", channel: "C1", thread: "171.1" };
const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 2 };
const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });
const assistantAsk = (id: string): ChatMessage => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "ask_user", input: { question: "Q?" } }],
});
/** A yes from U1 that resumes the turn. */
const answered = (askId: string, toolUseId: string, now: number) => ({
  status: "answered" as const,
  answer: { value: true },
  answeredBy: "U1",
  resultMessage: { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: toolUseId, content: "yes" }] },
  sessionStatus: "running" as const,
  audit: { actor: "U1", action: "ask-answered", target: askId, outcome: "answered", at: now },
  now,
});
const spec = (() => {
  const result = parseAskSpec({ type: "confirm", question: "Q?" }, 60);
  if (!result.ok) throw new Error(result.error);
  return result.spec;
})();

/** One suite, run against every Storage: the engine's guarantees rest on these. */
export function sessionStoreContract(name: string, create: () => Promise<{ store: Storage; cleanup: () => Promise<void> }>) {
  async function withStore(test: (store: Storage) => Promise<void>) {
    const { store, cleanup } = await create();
    try {
      await test(store);
    } finally {
      await cleanup();
    }
  }

  async function suspended(store: Storage, posted = true) {
    const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
    await store.startTurnOrQueue(session.id, user("hi"), 2);
    await store.commitStep(session.id, {
      messages: [assistantAsk("toolu_1")],
      usage: USAGE,
      ask: { id: "A1", toolUseId: "toolu_1", spec, siblingResults: [], deadline: 1000 },
      now: 3,
    });
    if (posted) await store.setCardRef("A1", "card-1", 1000);
    return session;
  }

  describe(`SessionStore contract: ${name}`, () => {
    it("answers a ping while open (the health check), and fails it once closed", async () => {
      const { store, cleanup } = await create();
      await store.ping();
      await store.close();
      if (name !== "memory") await expect(store.ping()).rejects.toThrow();
      await cleanup();
    });

    it("claims an event id once", () =>
      withStore(async (store) => {
        expect(await store.claimEvent("E1", 1)).toBe(true);
        expect(await store.claimEvent("E1", 2)).toBe(false);
        expect(await store.hasEvent("E1")).toBe(true);
        expect(await store.hasEvent("E2")).toBe(false);
      }));

    it("binds one session to one conversation", () =>
      withStore(async (store) => {
        const first = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        const second = await store.createSession({ id: "S2", conversation: CONVERSATION, ownerId: "U2", now: 2 });
        expect(second.id).toBe(first.id);
        expect(second.ownerId).toBe("U1");
        expect((await store.findSession(CONVERSATION))?.id).toBe("S1");
      }));

    it("starts a turn when idle, queues while running, and hands the queue to the next turn on end", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        expect(await store.startTurnOrQueue(session.id, user("one"), 2)).toBe("started");
        expect(await store.startTurnOrQueue(session.id, user("two"), 3, "E-two")).toBe("queued");
        expect(await store.startTurnOrQueue(session.id, user("two again"), 3, "E-two")).toBe("duplicate");
        const result = await store.commitStep(session.id, {
          messages: [{ role: "assistant", content: [{ type: "text", text: "ok" }] }],
          usage: USAGE,
          end: { outcome: "completed" },
          now: 4,
        });
        expect(result).toEqual({ nextTurn: true });
        const after = await store.getSession(session.id);
        expect(after).toMatchObject({ status: "running", turnCount: 2, turnIterations: 0, lastOutcome: "completed" });
        expect((await store.loadMessages(session.id)).map((message) => message.content[0])).toEqual([
          { type: "text", text: "one" },
          { type: "text", text: "ok" },
          { type: "text", text: "two" },
        ]);
      }));

    it("suspends: the ask and the assistant message land together, and a waiting session takes no turn", () =>
      withStore(async (store) => {
        const session = await suspended(store, false);
        expect(await store.getSession(session.id)).toMatchObject({ status: "waiting", turnAsks: 1, usage: USAGE });
        expect((await store.pendingAsk(session.id))?.id).toBe("A1");
        expect(await store.startTurnOrQueue(session.id, user("later"), 5)).toBe("waiting");
        expect((await store.listUnpostedAsks()).map((ask) => ask.id)).toEqual(["A1"]);
        expect(await store.listExpiredAsks(5000, 10)).toEqual([]);
        await store.setCardRef("A1", "card-1", 2000);
        expect(await store.listUnpostedAsks()).toEqual([]);
        expect(await store.getAsk("A1")).toMatchObject({ cardRef: "card-1", deadline: 2000 });
        // No deadline given (a card posted on time): the stored one stays.
        await store.setCardRef("A1", "card-2");
        expect(await store.getAsk("A1")).toMatchObject({ cardRef: "card-2", deadline: 2000 });
      }));

    it("resolves an ask exactly once and appends its result", () =>
      withStore(async (store) => {
        const session = await suspended(store);
        const resolution = {
          status: "answered" as const,
          answer: { value: true },
          answeredBy: "U1",
          resultMessage: {
            role: "user" as const,
            content: [{ type: "tool_result" as const, tool_use_id: "toolu_1", content: '{"ok":true,"value":true}' }],
          },
          sessionStatus: "running" as const,
          audit: { actor: "U1", action: "ask-answered", target: "A1", outcome: "answered", at: 10 },
          now: 10,
        };
        const results = await Promise.all([
          store.resolveAsk("A1", resolution),
          store.resolveAsk("A1", { ...resolution, answeredBy: "U2" }),
        ]);
        expect(results.filter((ask) => ask !== undefined)).toHaveLength(1);
        expect(await store.getAsk("A1")).toMatchObject({
          status: "answered",
          answeredBy: "U1",
          answer: { value: true },
          cardRef: "card-1",
        });
        expect(await store.getSession(session.id)).toMatchObject({ status: "running" });
        expect((await store.loadMessages(session.id)).at(-1)).toEqual(resolution.resultMessage);
        expect(await store.resolveAsk("A1", { ...resolution, status: "expired" })).toBeUndefined();
        const found = await store.getAskWithSession("A1");
        expect(found?.ask).toMatchObject({ id: "A1", status: "answered" });
        expect(found?.session).toMatchObject({ id: session.id, ownerId: "U1", conversation: CONVERSATION, status: "running" });
        expect(await store.getAskWithSession("missing")).toBeUndefined();
        expect((await store.listUnsettledAsks(10, 10)).map((ask) => ask.id)).toEqual(["A1"]);
        expect(await store.listUnsettledAsks(11, 10)).toEqual([]);
      }));

    it("an ended ask whose settle is recorded is not settled again on start", () =>
      withStore(async (store) => {
        await suspended(store);
        // Recording a pending ask's settle is refused: only an ending can be settled.
        await store.recordCardSettled("A1", 5);
        const audit = { actor: "U1", action: "ask-cancelled", target: "A1", outcome: "cancelled", at: 10 };
        const ended = await store.resolveAsk("A1", {
          status: "cancelled",
          answer: null,
          answeredBy: "U1",
          resultMessage: null,
          sessionStatus: null,
          audit,
          now: 10,
        });
        expect(ended?.status).toBe("cancelled");
        expect((await store.listUnsettledAsks(0, 10)).map((ask) => ask.id)).toEqual(["A1"]);
        await store.recordCardSettled("A1", 11);
        expect(await store.listUnsettledAsks(0, 10)).toEqual([]);
        await store.recordCardSettled("missing", 12);
      }));

    it("finds the most recently active waiting session of a channel, and only of that channel", () =>
      withStore(async (store) => {
        await suspended(store);
        const dm = { platform: CONVERSATION.platform, workspace: CONVERSATION.workspace, channel: CONVERSATION.channel };
        expect((await store.waitingSessionIn(dm))?.id).toBe("S1");
        expect(await store.waitingSessionIn({ ...dm, channel: "C2" })).toBeUndefined();
        expect(await store.waitingSessionIn({ ...dm, workspace: "T2" })).toBeUndefined();
        expect(await store.waitingSessionIn({ ...dm, platform: "discord" })).toBeUndefined();
        // An idle session in the same channel is not waiting on anything.
        await store.createSession({ id: "S2", conversation: { ...CONVERSATION, thread: "171.2" }, ownerId: "U1", now: 9 });
        expect((await store.waitingSessionIn(dm))?.id).toBe("S1");
        await store.resolveAsk("A1", {
          status: "cancelled",
          answer: null,
          answeredBy: "U1",
          resultMessage: null,
          sessionStatus: "idle",
          audit: { actor: "U1", action: "ask-cancelled", target: "A1", outcome: "cancelled", at: 10 },
          now: 10,
        });
        expect(await store.waitingSessionIn(dm)).toBeUndefined();
      }));

    it("lists a platform's recently active conversations, most recent first", () =>
      withStore(async (store) => {
        const at = (thread: string, platform: Platform = "slack") => ({ ...CONVERSATION, platform, thread });
        await store.createSession({ id: "old", conversation: at("1"), ownerId: "U1", now: 10 });
        await store.createSession({ id: "new", conversation: at("2"), ownerId: "U1", now: 30 });
        await store.createSession({ id: "mid", conversation: at("3"), ownerId: "U1", now: 20 });
        await store.createSession({ id: "other", conversation: at("4", "discord"), ownerId: "U1", now: 40 });
        expect(await store.listRecentConversations("slack", 15, 10)).toEqual([at("2"), at("3")]);
        expect(await store.listRecentConversations("slack", 0, 1)).toEqual([at("2")]);
        expect(await store.listRecentConversations("discord", 0, 10)).toEqual([at("4", "discord")]);
      }));

    it("leases a running turn to one owner at a time, until it expires, is dropped, or its holder is displaced", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        const a = { owner: "host:1:a", now: 100, ttlMs: 30 };
        const b = { owner: "host:2:b", now: 110, ttlMs: 30 };
        // Not running: no turn to lease.
        expect(await store.takeTurn("S1", a)).toEqual({ taken: false, holder: null });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        const granted = { taken: true, session: expect.objectContaining({ id: "S1", status: "running", turnCount: 1 }) };
        // The grant carries the session, as the turn starts from it.
        expect(await store.takeTurn("S1", a)).toEqual(granted);
        expect(await store.takeTurn("S1", b)).toEqual({ taken: false, holder: "host:1:a" });
        // The holder renews; a known-dead holder is displaced at once; an expired lease is anyone's.
        expect(await store.takeTurn("S1", { ...a, now: 120 })).toEqual(granted);
        expect(await store.takeTurn("S1", { ...b, displace: "host:1:a" })).toEqual(granted);
        expect(await store.takeTurn("S1", { ...a, now: 139 })).toEqual({ taken: false, holder: "host:2:b" });
        expect(await store.takeTurn("S1", { ...a, now: 140 })).toEqual(granted);
        // Dropped by its holder only.
        await store.releaseTurn("S1", "host:2:b");
        expect(await store.takeTurn("S1", { ...b, now: 141 })).toEqual({ taken: false, holder: "host:1:a" });
        await store.releaseTurn("S1", "host:1:a");
        expect(await store.takeTurn("S1", { ...b, now: 142 })).toEqual(granted);
      }));

    it("drops the turn's lease in the step that suspends or ends it, and keeps it when queued messages start the next", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        const a = { owner: "host:1:a", now: 100, ttlMs: 1_000 };
        const b = { owner: "host:2:b", now: 101, ttlMs: 1_000 };
        const heldBy = async (owner: string) => {
          // A running session whose lease is held refuses another owner; a free one grants it (and is then dropped).
          const answer = await store.takeTurn("S1", b);
          if (answer.taken) await store.releaseTurn("S1", b.owner);
          return answer.taken ? null : answer.holder === owner;
        };
        // Suspended on an ask: the lease goes with the write, and the answer's turn is anyone's to take.
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        await store.takeTurn("S1", a);
        const ask = { id: "A1", toolUseId: "toolu_1", spec, siblingResults: [], deadline: 1000 };
        await store.commitStep("S1", { messages: [assistantAsk("toolu_1")], usage: USAGE, ask, now: 3 });
        await store.resolveAsk("A1", answered("A1", "toolu_1", 4));
        expect(await heldBy(a.owner)).toBeNull();
        // A step that does not end the turn keeps it.
        await store.takeTurn("S1", a);
        await store.commitStep("S1", { messages: [], usage: USAGE, now: 5 });
        expect(await heldBy(a.owner)).toBe(true);
        // An end with a message queued meanwhile: the next turn starts in the same write, under the same lease.
        expect(await store.startTurnOrQueue(session.id, user("and then?"), 6)).toBe("queued");
        expect(await store.commitStep("S1", { messages: [], usage: USAGE, end: { outcome: "completed" }, now: 7 })).toEqual({
          nextTurn: true,
        });
        expect(await heldBy(a.owner)).toBe(true);
        // An end with nothing queued: the lease goes; the session is idle, with no turn to lease.
        await store.commitStep("S1", { messages: [], usage: USAGE, end: { outcome: "failed", error: "x" }, now: 8 });
        await store.startTurnOrQueue(session.id, user("again"), 9);
        expect(await heldBy(a.owner)).toBeNull();
        // A claim that resumes a turn may take its lease in the same write, for the process that will run it.
        await store.takeTurn("S1", a);
        const second = { id: "A2", toolUseId: "toolu_2", spec, siblingResults: [], deadline: 1000 };
        await store.commitStep("S1", { messages: [assistantAsk("toolu_2")], usage: USAGE, ask: second, now: 10 });
        await store.resolveAsk("A2", { ...answered("A2", "toolu_2", 11), lease: { ...a, now: 11 } });
        expect(await heldBy(a.owner)).toBe(true);
        expect(await store.takeTurn("S1", { ...b, now: 11 + a.ttlMs })).toMatchObject({ taken: true });
      }));

    it("claims the post of a card: the ask's writer holds it from the write; others wait until it expires, or its holder is dead", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        const a = { owner: "host:1:a", now: 100, ttlMs: 30 };
        const b = { owner: "host:2:b", now: 110, ttlMs: 30 };
        const claim = { owner: "host:1:a", until: 130 };
        const ask = { id: "A1", toolUseId: "toolu_1", spec, siblingResults: [], deadline: 1000, claim };
        await store.commitStep(session.id, { messages: [assistantAsk("toolu_1")], usage: USAGE, ask, now: 100 });
        // The claim is kept beside the ask, not in it.
        expect(await store.getAsk("A1")).not.toHaveProperty("claim");
        expect(await store.claimCardPost("A1", b)).toEqual({ taken: false, holder: "host:1:a" });
        expect(await store.claimCardPost("A1", { ...a, now: 120 })).toEqual({ taken: true });
        expect(await store.claimCardPost("A1", { ...b, now: 149 })).toEqual({ taken: false, holder: "host:1:a" });
        expect(await store.claimCardPost("A1", { ...b, now: 150 })).toEqual({ taken: true });
        expect(await store.claimCardPost("A1", { ...a, now: 151, displace: "host:2:b" })).toEqual({ taken: true });
        // Posted (or ended): nothing left to claim.
        await store.setCardRef("A1", "card-1", 1000);
        expect(await store.claimCardPost("A1", { ...b, now: 500 })).toEqual({ taken: false, holder: null });
        expect(await store.claimCardPost("nope", b)).toEqual({ taken: false, holder: null });
        // An ask written with no claim (an older row, or a writer that claims later) is anyone's.
        await store.openAsk("S1", { id: "A2", toolUseId: "toolu_2", spec, siblingResults: [], deadline: 1000 }, 200);
        expect(await store.claimCardPost("A2", { ...b, now: 200 })).toEqual({ taken: true });
        expect(await store.claimCardPost("A2", { ...a, now: 201 })).toEqual({ taken: false, holder: "host:2:b" });
      }));

    it("claims the post of a final answer in the outbox, as a card's", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        const answer: ChatMessage = { role: "assistant", content: [{ type: "text", text: "Done it." }] };
        const reply = { key: "S1:1", sessionId: session.id, text: "Done it.", claim: { owner: "host:1:a", until: 130 } };
        await store.commitStep("S1", { messages: [answer], usage: USAGE, end: { outcome: "completed", reply }, now: 100 });
        expect(await store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([
          { key: "S1:1", sessionId: "S1", text: "Done it.", writtenAt: 100 },
        ]);
        const b = { owner: "host:2:b", now: 110, ttlMs: 30 };
        expect(await store.claimReplyPost("S1:1", b)).toEqual({ taken: false, holder: "host:1:a" });
        expect(await store.claimReplyPost("S1:1", { ...b, displace: "host:1:a" })).toEqual({ taken: true });
        expect(await store.claimReplyPost("S1:1", { owner: "host:1:a", now: 120, ttlMs: 30 })).toEqual({
          taken: false,
          holder: "host:2:b",
        });
        await store.replyPosted("S1:1");
        expect(await store.claimReplyPost("S1:1", { ...b, now: 500 })).toEqual({ taken: false, holder: null });
      }));

    it("lists expired pending asks by deadline", () =>
      withStore(async (store) => {
        await suspended(store);
        expect(await store.listExpiredAsks(999, 10)).toEqual([]);
        expect((await store.listExpiredAsks(1000, 10)).map((ask) => ask.id)).toEqual(["A1"]);
      }));

    it("records stop requests, recovery attempts and failures", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("x"), 2);
        await store.requestStop(session.id);
        expect((await store.getSession(session.id))?.stopRequested).toBe(true);
        expect(await store.isStopRequested(session.id)).toBe(true);
        expect(await store.countRecovery(session.id)).toBe(1);
        expect(await store.countRecovery(session.id)).toBe(2);
        expect((await store.listSessionsByStatus("running")).map((item) => item.id)).toEqual(["S1"]);
        await store.commitStep(session.id, { messages: [], usage: USAGE, end: { outcome: "failed", error: "boom" }, now: 3 });
        expect(await store.getSession(session.id)).toMatchObject({ status: "failed", lastError: "boom", recoveryAttempts: 0 });
        expect(await store.startTurnOrQueue(session.id, null, 4)).toBe("started");
        expect(await store.getSession(session.id)).toMatchObject({ status: "running", stopRequested: false, lastError: null });
      }));
  });

  describe(`tool calls and approvals: ${name}`, () => {
    const call = { sessionId: "S1", toolUseId: "toolu_9", name: "files__write_file", argumentsHash: "ab".repeat(32), now: 5 };

    it("journals a call once: started before it is sent, finished with its result, never started twice", () =>
      withStore(async (store) => {
        await suspended(store);
        expect(await store.getToolCall("S1", "toolu_9")).toBeUndefined();
        expect(await store.startToolCall(call)).toBe(true);
        expect(await store.startToolCall({ ...call, now: 6 })).toBe(false);
        expect(await store.getToolCall("S1", "toolu_9")).toMatchObject({ status: "started", result: null, startedAt: 5, name: call.name });
        const result = { type: "tool_result" as const, tool_use_id: "toolu_9", content: [{ type: "text" as const, text: "written" }] };
        await store.finishToolCall("S1", "toolu_9", result, 7);
        expect(await store.getToolCall("S1", "toolu_9")).toMatchObject({ status: "finished", result, finishedAt: 7 });
        // Another session's call with the same tool_use id is its own entry.
        expect(await store.getToolCall("S2", "toolu_9")).toBeUndefined();
      }));

    it("finds the approval of a tool call, and an approval's claim appends no message", () =>
      withStore(async (store) => {
        await suspended(store);
        expect((await store.askForToolUse("S1", "toolu_1"))?.id).toBe("A1");
        expect(await store.askForToolUse("S1", "toolu_other")).toBeUndefined();
        expect(await store.askForToolUse("S2", "toolu_1")).toBeUndefined();
        const before = await store.loadMessages("S1");
        const won = await store.resolveAsk("A1", {
          status: "answered",
          answer: { value: { decision: "approve" } },
          answeredBy: "U1",
          resultMessage: null,
          sessionStatus: "running",
          audit: { actor: "U1", action: "ask-answered", target: "A1", outcome: "answered", at: 4 },
          now: 4,
        });
        expect(won?.status).toBe("answered");
        expect(await store.loadMessages("S1")).toEqual(before);
        expect((await store.getSession("S1"))?.status).toBe("running");
        // The next step's messages still take the next places in the history.
        await store.commitStep("S1", { messages: [user("after")], usage: USAGE, now: 5 });
        expect((await store.loadMessages("S1")).at(-1)).toEqual(user("after"));
      }));

    it("opens an ask that suspends nothing (an elicitation); its claim leaves the session and its history alone", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        const before = await store.getSession("S1");
        const messages = await store.loadMessages("S1");
        await store.openAsk("S1", { id: "E1", toolUseId: "elicitation:E1", spec, siblingResults: [], deadline: 900 }, 3);
        expect(await store.getAsk("E1")).toMatchObject({ sessionId: "S1", status: "pending", cardRef: null, deadline: 900 });
        expect(await store.getSession("S1")).toMatchObject({ status: "running", turnAsks: before?.turnAsks });
        expect(await store.setCardRef("E1", "card-e", 900)).toBe("pending");
        const resolution = {
          status: "answered" as const,
          answer: { value: { confirm: true } },
          answeredBy: "U1",
          resultMessage: null,
          sessionStatus: null,
          audit: { actor: "U1", action: "ask-answered", target: "E1", outcome: "answered", at: 4 },
          now: 4,
        };
        expect((await store.resolveAsk("E1", resolution))?.status).toBe("answered");
        expect(await store.resolveAsk("E1", { ...resolution, answeredBy: "U2" })).toBeUndefined();
        expect((await store.getSession("S1"))?.status).toBe("running");
        expect(await store.loadMessages("S1")).toEqual(messages);
      }));

    it("keeps a turn's final answer in the outbox from the turn's end until it is posted", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        const answer: ChatMessage = { role: "assistant", content: [{ type: "text", text: "Done it." }] };
        const reply = { key: "S1:1", sessionId: session.id, text: "Done it." };
        await store.commitStep("S1", { messages: [answer], usage: USAGE, end: { outcome: "completed", reply }, now: 3 });
        // With when the turn wrote it: a platform copy from before then is an earlier answer.
        const written = { ...reply, writtenAt: 3 };
        expect(await store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([written]);
        // Only those written before the given time: the sweeper leaves a turn the moment to post its own.
        expect(await store.listPendingReplies(3, 10)).toEqual([]);
        expect(await store.listPendingReplies(4, 10)).toEqual([written]);
        expect((await store.getSession("S1"))?.status).toBe("idle");
        await store.replyPosted("S1:1");
        await store.replyPosted("S1:1");
        expect(await store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      }));

    it("counts a model iteration only for a step with an assistant message", () =>
      withStore(async (store) => {
        const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue(session.id, user("hi"), 2);
        await store.commitStep(session.id, { messages: [assistantAsk("toolu_2")], usage: USAGE, now: 3 });
        await store.commitStep(session.id, {
          messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "ok" }] }],
          usage: USAGE,
          now: 4,
        });
        expect((await store.getSession(session.id))?.turnIterations).toBe(1);
      }));
  });

  // The written table in src/store/transitions.ts, row by row: the next store implements a table, not a reading of code.
  describe(`session transitions: ${name}`, () => {
    /** Puts a fresh session into `status` through the store's own methods. */
    async function sessionIn(store: Storage, status: SessionStatus): Promise<string> {
      const session = await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
      if (status === "idle") return session.id;
      await store.startTurnOrQueue(session.id, user("hi"), 2);
      if (status === "waiting") await suspendedStep(store, session.id);
      if (status === "failed")
        await store.commitStep(session.id, { messages: [], usage: USAGE, end: { outcome: "failed", error: "x" }, now: 3 });
      return session.id;
    }
    async function suspendedStep(store: Storage, sessionId: string) {
      await store.commitStep(sessionId, {
        messages: [assistantAsk("toolu_1")],
        usage: USAGE,
        ask: { id: "A1", toolUseId: "toolu_1", spec, siblingResults: [], deadline: 1000 },
        now: 3,
      });
    }
    const resolution = (stop: boolean) => ({
      status: stop ? ("cancelled" as const) : ("answered" as const),
      answer: stop ? null : { value: true },
      answeredBy: "U1",
      resultMessage: { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "toolu_1", content: "{}" }] },
      sessionStatus: stop ? ("idle" as const) : ("running" as const),
      ...(stop ? { outcome: "cancelled" as const } : {}),
      audit: { actor: "U1", action: "ask", target: "A1", outcome: "x", at: 4 },
      now: 4,
    });
    const apply: Record<SessionEvent, (store: Storage, sessionId: string) => Promise<unknown>> = {
      message: (store, sessionId) => store.startTurnOrQueue(sessionId, user("next"), 5),
      suspend: (store, sessionId) => suspendedStep(store, sessionId),
      resolve: (store) => store.resolveAsk("A1", resolution(false)),
      stop: (store) => store.resolveAsk("A1", resolution(true)),
      end: (store, sessionId) => store.commitStep(sessionId, { messages: [], usage: USAGE, end: { outcome: "completed" }, now: 5 }),
      "end-with-queued": async (store, sessionId) => {
        await store.startTurnOrQueue(sessionId, user("queued"), 4);
        return store.commitStep(sessionId, { messages: [], usage: USAGE, end: { outcome: "completed" }, now: 5 });
      },
      fail: (store, sessionId) =>
        store.commitStep(sessionId, { messages: [], usage: USAGE, end: { outcome: "failed", error: "e" }, now: 5 }),
      "api-ask": (store) =>
        store.createExternalAsk({
          session: { id: "S-api", conversation: CONVERSATION, ownerId: "api:ci", now: 5 },
          ask: { id: "A-api", toolUseId: "api:A-api", spec: { ...spec, external: { answerers: [] } }, siblingResults: [], deadline: 9000 },
          token: "ci",
          idempotencyKey: null,
          requestHash: "h",
          metadata: null,
          callbackUrl: null,
          now: 5,
        }),
      "api-resolve": (store) => store.resolveAsk("A1", { ...resolution(false), resultMessage: null, sessionStatus: "idle" }),
    };
    for (const transition of SESSION_TRANSITIONS) {
      it(`${transition.from} --${transition.event}--> ${transition.to}`, () =>
        withStore(async (store) => {
          const sessionId = await sessionIn(store, transition.from);
          expect((await store.getSession(sessionId))?.status).toBe(transition.from);
          await apply[transition.event](store, sessionId);
          expect((await store.getSession(sessionId))?.status).toBe(transition.to);
        }));
    }
  });
}
