import { describe, expect, it } from "vitest";
import { parseAskSpec } from "../../src/ask/spec.js";
import type { ExternalAsk, NewExternalAsk, StoredToken } from "../../src/ports/api-store.js";
import { asAskId } from "../../src/ports/ids.js";
import type { Storage } from "../../src/ports/maintenance-store.js";
import type { ChatMessage } from "../../src/ports/model-client.js";
import type { AskResolution, ConversationRef } from "../../src/ports/session-store.js";

const CONVERSATION: ConversationRef = { platform: "slack", workspace: "T1", channel: "C1", thread: "171.1" };
const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 2 };
const HOOK = "https://example.test/hook";
const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });
const thread = (name: string): ConversationRef => ({ ...CONVERSATION, thread: name });
const spec = (() => {
  const result = parseAskSpec({ type: "confirm", question: "Deploy?" }, 60);
  if (!result.ok) throw new Error(result.error);
  return result.spec;
})();

interface Opening {
  askId: string;
  conversation?: ConversationRef;
  token?: string;
  key?: string | null;
  requestHash?: string;
  metadata?: unknown;
  callbackUrl?: string | null;
  now?: number;
}

/** The request the API makes to open ask `askId`; the session it would create is `S-<askId>`. */
function opening(options: Opening): NewExternalAsk {
  const now = options.now ?? 5;
  const token = options.token ?? "ci";
  return {
    session: { id: `S-${options.askId}`, conversation: options.conversation ?? CONVERSATION, ownerId: `api:${token}`, now },
    ask: { id: options.askId, toolUseId: `api:${options.askId}`, spec, siblingResults: [], deadline: now + 60_000 },
    token,
    idempotencyKey: options.key ?? null,
    requestHash: options.requestHash ?? "ab".repeat(32),
    metadata: options.metadata === undefined ? { ticket: "OPS-1" } : options.metadata,
    callbackUrl: options.callbackUrl === undefined ? HOOK : options.callbackUrl,
    now,
  };
}

/** What the API's cancel or a person's tap writes: the ask ends and, no turn waiting on it, the session goes idle. */
const ending = (askId: string, now: number): AskResolution => ({
  status: "answered",
  answer: { value: true },
  answeredBy: "U1",
  resultMessage: null,
  sessionStatus: "idle",
  audit: { actor: "U1", action: "ask-answered", target: askId, outcome: "answered", at: now },
  now,
});

const askIds = (due: Array<{ external: ExternalAsk }>) => due.map((item) => item.external.askId);

/** What the HTTP API and the MCP server rely on, run against every Storage. */
export function apiStoreContract(name: string, open: () => Promise<{ store: Storage; cleanup: () => Promise<void> }>) {
  async function withStore(test: (store: Storage) => Promise<void>) {
    const { store, cleanup } = await open();
    try {
      await test(store);
    } finally {
      await cleanup();
    }
  }

  /** An external ask on its own thread, ended at `endedAt`. */
  async function ended(store: Storage, askId: string, endedAt: number, callbackUrl: string | null = HOOK) {
    expect((await store.createExternalAsk(opening({ askId, conversation: thread(askId), callbackUrl }))).kind).toBe("created");
    expect((await store.resolveAsk(askId, ending(askId, endedAt)))?.status).toBe("answered");
  }

  /** A session that has run one turn and ended it with `outcome`. */
  async function afterTurn(store: Storage, sessionId: string, conversation: ConversationRef, outcome: "completed" | "failed") {
    await store.createSession({ id: sessionId, conversation, ownerId: "U1", now: 1 });
    await store.startTurnOrQueue(sessionId, user("hi"), 2);
    const end = outcome === "failed" ? { outcome, error: "boom" } : { outcome };
    const answer: ChatMessage = { role: "assistant", content: [{ type: "text", text: "done" }] };
    await store.commitStep(sessionId, { messages: [answer], usage: USAGE, end, now: 3 });
  }

  describe(`ApiStore contract: ${name}`, () => {
    it("opens an ask on a new thread: a waiting session with no history, the pending ask, and the API's record", () =>
      withStore(async (store) => {
        const created = await store.createExternalAsk(opening({ askId: "A1", key: "K1", now: 5 }));
        expect(created).toEqual({ kind: "created", askId: "A1", sessionId: "S-A1" });
        expect(await store.getSession("S-A1")).toMatchObject({
          conversation: CONVERSATION,
          ownerId: "api:ci",
          status: "waiting",
          turnCount: 0,
          turnAsks: 0,
          turnIterations: 0,
          usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
          createdAt: 5,
          updatedAt: 5,
        });
        expect(await store.loadMessages("S-A1")).toEqual([]);
        expect(await store.getAsk("A1")).toEqual({
          id: "A1",
          sessionId: "S-A1",
          toolUseId: "api:A1",
          spec,
          status: "pending",
          siblingResults: [],
          cardRef: null,
          deadline: 60_005,
          answer: null,
          answeredBy: null,
          createdAt: 5,
          endedAt: null,
        });
        expect((await store.pendingAsk("S-A1"))?.id).toBe("A1");
        // Its card is not posted yet: recovery finds it should the process die before posting.
        expect((await store.listUnpostedAsks()).map((ask) => ask.id)).toEqual(["A1"]);
        expect(await store.getExternalAsk("A1")).toEqual({
          askId: "A1",
          token: "ci",
          metadata: { ticket: "OPS-1" },
          callbackUrl: HOOK,
          idempotencyKey: "K1",
          requestHash: "ab".repeat(32),
          callbackAttempts: 0,
          callbackNextAt: null,
          callbackDoneAt: null,
          callbackOutcome: null,
        });
        // A message in the thread now waits for the answer, as on an agent's question.
        expect(await store.startTurnOrQueue("S-A1", user("hello?"), 6)).toBe("waiting");
      }));

    it("reuses the thread's idle or failed session: it waits, keeps its owner, its history and its turn counters", () =>
      withStore(async (store) => {
        for (const [sessionId, outcome] of [
          ["S-idle", "completed"],
          ["S-failed", "failed"],
        ] as const) {
          const conversation = thread(sessionId);
          await afterTurn(store, sessionId, conversation, outcome);
          const before = await store.getSession(sessionId);
          const history = await store.loadMessages(sessionId);
          const askId = `A-${outcome}`;
          const created = await store.createExternalAsk(opening({ askId, conversation, now: 7 }));
          expect(created).toEqual({ kind: "created", askId, sessionId });
          expect(await store.getSession(sessionId)).toMatchObject({
            status: "waiting",
            ownerId: "U1",
            turnCount: before?.turnCount,
            turnAsks: before?.turnAsks,
            turnIterations: before?.turnIterations,
            usage: before?.usage,
            createdAt: 1,
            updatedAt: 7,
          });
          expect(await store.loadMessages(sessionId)).toEqual(history);
          expect((await store.getAsk(askId))?.sessionId).toBe(sessionId);
          // The request's own session id was not used: the thread keeps one session.
          expect(await store.getSession(`S-${askId}`)).toBeUndefined();
        }
      }));

    it("refuses a thread where a turn runs or a question waits, and writes nothing", () =>
      withStore(async (store) => {
        await store.createSession({ id: "S1", conversation: CONVERSATION, ownerId: "U1", now: 1 });
        await store.startTurnOrQueue("S1", user("hi"), 2);
        expect(await store.createExternalAsk(opening({ askId: "A1", key: "K1" }))).toEqual({ kind: "busy" });
        expect(await store.getSession("S1")).toMatchObject({ status: "running", updatedAt: 2 });
        expect(await store.getAsk("A1")).toBeUndefined();
        expect(await store.getExternalAsk("A1")).toBeUndefined();
        // The key was not spent: a retry once the thread is free opens the ask.
        expect(await store.findByIdempotencyKey("ci", "K1")).toBeUndefined();
        expect(await store.listAsks("S1")).toEqual([]);

        const waiting = thread("171.2");
        expect((await store.createExternalAsk(opening({ askId: "A2", conversation: waiting }))).kind).toBe("created");
        expect(await store.createExternalAsk(opening({ askId: "A3", conversation: waiting, key: "K3", now: 9 }))).toEqual({ kind: "busy" });
        expect(await store.getSession("S-A2")).toMatchObject({ status: "waiting", updatedAt: 5 });
        expect((await store.pendingAsk("S-A2"))?.id).toBe("A2");
        expect(await store.getAsk("A3")).toBeUndefined();
        expect(await store.getExternalAsk("A3")).toBeUndefined();
        expect(await store.findByIdempotencyKey("ci", "K3")).toBeUndefined();
      }));

    it("replays a token's earlier ask under the same idempotency key, writing nothing; another token's key is its own", () =>
      withStore(async (store) => {
        const first = await store.createExternalAsk(opening({ askId: "A1", key: "K1", conversation: thread("1") }));
        expect(first).toEqual({ kind: "created", askId: "A1", sessionId: "S-A1" });
        const earlier = await store.getExternalAsk("A1");
        // Whatever the retry holds (another thread, another body, the earlier ask's own busy thread): the earlier ask.
        const elsewhere = opening({ askId: "A2", key: "K1", conversation: thread("2"), requestHash: "cd".repeat(32) });
        expect(await store.createExternalAsk(elsewhere)).toEqual({ kind: "replayed", external: earlier });
        expect(await store.createExternalAsk(opening({ askId: "A3", key: "K1", conversation: thread("1") }))).toEqual({
          kind: "replayed",
          external: earlier,
        });
        expect(await store.getAsk("A2")).toBeUndefined();
        expect(await store.getAsk("A3")).toBeUndefined();
        expect(await store.getExternalAsk("A2")).toBeUndefined();
        expect(await store.findSession(thread("2"))).toBeUndefined();
        expect((await store.listAsks("S-A1")).map((ask) => ask.id)).toEqual(["A1"]);

        const other = await store.createExternalAsk(opening({ askId: "A4", key: "K1", token: "ops", conversation: thread("4") }));
        expect(other).toEqual({ kind: "created", askId: "A4", sessionId: "S-A4" });
        expect((await store.findByIdempotencyKey("ops", "K1"))?.askId).toBe("A4");
        expect((await store.findByIdempotencyKey("ci", "K1"))?.askId).toBe("A1");

        // Without a key every request is new.
        for (const askId of ["A5", "A6"])
          expect((await store.createExternalAsk(opening({ askId, conversation: thread(askId) }))).kind).toBe("created");
      }));

    it("keeps the record as written: metadata as JSON, or null; no callback url; no key", () =>
      withStore(async (store) => {
        const metadata = { ticket: "OPS-1", nested: { count: 2, tags: ["a", "b"], none: null }, ok: true, text: 'é ✓ "q"' };
        const hook = "https://example.test/hook?ticket=OPS-1&x=%20";
        await store.createExternalAsk(opening({ askId: "A1", key: "K1", metadata, callbackUrl: hook, requestHash: "ef".repeat(32) }));
        const expected: ExternalAsk = {
          askId: asAskId("A1"),
          token: "ci",
          metadata,
          callbackUrl: hook,
          idempotencyKey: "K1",
          requestHash: "ef".repeat(32),
          callbackAttempts: 0,
          callbackNextAt: null,
          callbackDoneAt: null,
          callbackOutcome: null,
        };
        expect(await store.getExternalAsk("A1")).toEqual(expected);
        expect(await store.findByIdempotencyKey("ci", "K1")).toEqual(expected);

        await store.createExternalAsk(opening({ askId: "A2", conversation: thread("2"), metadata: null, callbackUrl: null }));
        expect(await store.getExternalAsk("A2")).toMatchObject({ metadata: null, callbackUrl: null, idempotencyKey: null });

        expect(await store.getExternalAsk("missing")).toBeUndefined();
        expect(await store.findByIdempotencyKey("ci", "missing")).toBeUndefined();
        expect(await store.findByIdempotencyKey("ops", "K1")).toBeUndefined();
      }));

    it("ends through resolveAsk like any ask: the session goes idle and the thread takes the next question", () =>
      withStore(async (store) => {
        await store.createExternalAsk(opening({ askId: "A1" }));
        expect(await store.resolveAsk("A1", ending("A1", 10))).toMatchObject({
          id: "A1",
          status: "answered",
          answeredBy: "U1",
          endedAt: 10,
        });
        expect(await store.getSession("S-A1")).toMatchObject({ status: "idle", turnCount: 0, updatedAt: 10 });
        expect(await store.loadMessages("S-A1")).toEqual([]);
        expect(await store.pendingAsk("S-A1")).toBeUndefined();
        expect(await store.createExternalAsk(opening({ askId: "A2", now: 11 }))).toEqual({
          kind: "created",
          askId: "A2",
          sessionId: "S-A1",
        });
      }));

    it("lists due callbacks: ended asks with a url, not finished, due now; oldest ending first, up to the limit", () =>
      withStore(async (store) => {
        await ended(store, "late", 30);
        await ended(store, "early", 10);
        await ended(store, "no-url", 5, null);
        await ended(store, "finished", 1);
        await store.finishCallback("finished", "delivered", 2);
        await store.createExternalAsk(opening({ askId: "pending", conversation: thread("pending") }));
        expect(askIds(await store.listDueCallbacks(100, 10))).toEqual(["early", "late"]);
        expect(askIds(await store.listDueCallbacks(100, 1))).toEqual(["early"]);
        const [first] = await store.listDueCallbacks(100, 10);
        expect(first?.ask).toMatchObject({ id: "early", sessionId: "S-early", status: "answered", endedAt: 10 });
        expect(first?.external).toEqual(await store.getExternalAsk("early"));
        // Taken with its next attempt at 200: not due before then, due from then on.
        expect(await store.takeCallback("early", 100, 200)).toBe(1);
        expect(askIds(await store.listDueCallbacks(199, 10))).toEqual(["late"]);
        expect(askIds(await store.listDueCallbacks(200, 10))).toEqual(["early", "late"]);
      }));

    it("hands each delivery attempt to one caller: numbered, and due again only at its retry time", () =>
      withStore(async (store) => {
        await ended(store, "A1", 10);
        expect(await store.takeCallback("A1", 100, 200)).toBe(1);
        expect(await store.takeCallback("A1", 100, 200)).toBeUndefined();
        expect(await store.takeCallback("A1", 199, 300)).toBeUndefined();
        expect(await store.getExternalAsk("A1")).toMatchObject({ callbackAttempts: 1, callbackNextAt: 200 });
        // The first taker died: its attempt is retried at the time it set.
        expect(await store.takeCallback("A1", 200, 400)).toBe(2);
        expect(await store.getExternalAsk("A1")).toMatchObject({ callbackAttempts: 2, callbackNextAt: 400 });
        const racing = await Promise.all([store.takeCallback("A1", 400, 500), store.takeCallback("A1", 400, 500)]);
        expect(racing.filter((attempt) => attempt !== undefined)).toEqual([3]);
        expect(await store.takeCallback("missing", 100, 200)).toBeUndefined();
      }));

    it("finishes a callback once: never due nor taken again, its outcome kept", () =>
      withStore(async (store) => {
        await ended(store, "A1", 10);
        await ended(store, "A2", 20);
        expect(await store.takeCallback("A1", 100, 200)).toBe(1);
        await store.finishCallback("A1", "delivered", 150);
        expect(askIds(await store.listDueCallbacks(10_000, 10))).toEqual(["A2"]);
        expect(await store.getExternalAsk("A1")).toMatchObject({ callbackAttempts: 1, callbackDoneAt: 150, callbackOutcome: "delivered" });
        expect(await store.takeCallback("A1", 10_000, 20_000)).toBeUndefined();
        // A late finisher (the attempt was taken over meanwhile) does not rewrite what happened.
        await store.finishCallback("A1", "given-up", 160);
        expect(await store.getExternalAsk("A1")).toMatchObject({ callbackDoneAt: 150, callbackOutcome: "delivered" });
        // Given up without an attempt (too old, or its token revoked).
        await store.finishCallback("A2", "given-up", 170);
        expect(await store.listDueCallbacks(10_000, 10)).toEqual([]);
        expect(await store.getExternalAsk("A2")).toMatchObject({ callbackAttempts: 0, callbackDoneAt: 170, callbackOutcome: "given-up" });
        await store.finishCallback("missing", "delivered", 180);
      }));

    it("gives a name to one token for ever: a revoked one stays listed, and its name is not handed to another", () =>
      withStore(async (store) => {
        const token = (name: string, createdAt: number, secretHash: string): StoredToken => ({
          name,
          secretHash,
          createdBy: "U_ADMIN",
          createdAt,
          revokedAt: null,
        });
        expect(await store.listTokens()).toEqual([]);
        expect(await store.saveToken(token("ci", 1, "11".repeat(32)))).toBe(true);
        expect(await store.saveToken(token("ci", 2, "22".repeat(32)))).toBe(false);
        expect(await store.saveToken(token("ops", 3, "33".repeat(32)))).toBe(true);
        expect(await store.revokeToken("ci", 4)).toBe(true);
        expect(await store.revokeToken("ci", 5)).toBe(false);
        expect(await store.revokeToken("nobody", 5)).toBe(false);
        // Asks belong to a token's name: a new token under a revoked name would inherit its asks and callbacks.
        expect(await store.saveToken(token("ci", 6, "44".repeat(32)))).toBe(false);
        expect(await store.listTokens()).toEqual([{ ...token("ci", 1, "11".repeat(32)), revokedAt: 4 }, token("ops", 3, "33".repeat(32))]);
      }));

    it("purges an ended thread's API records with its asks; a waiting one stays", () =>
      withStore(async (store) => {
        await store.createExternalAsk(opening({ askId: "A1", key: "K1", now: 5 }));
        await store.resolveAsk("A1", ending("A1", 10));
        await store.createExternalAsk(opening({ askId: "W1", key: "KW", conversation: thread("waiting"), now: 5 }));
        expect(await store.purgeEnded(11)).toEqual({ sessions: 1, messages: 0, asks: 1 });
        expect(await store.getExternalAsk("A1")).toBeUndefined();
        expect(await store.findByIdempotencyKey("ci", "K1")).toBeUndefined();
        expect(await store.listDueCallbacks(1000, 10)).toEqual([]);
        expect((await store.getExternalAsk("W1"))?.askId).toBe("W1");
        // The purged ask's key is free: the same request now opens a new ask on a new session.
        expect(await store.createExternalAsk(opening({ askId: "A2", key: "K1", now: 12 }))).toEqual({
          kind: "created",
          askId: "A2",
          sessionId: "S-A2",
        });
      }));
  });
}
