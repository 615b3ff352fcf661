import fc from "fast-check";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ASK_TYPES } from "../../src/ask/spec.js";
import type { CallbackSender } from "../../src/ports/ask-api.js";
import { ALICE, SlackHarness } from "../slack/slack-harness.js";
import { CHANNEL } from "../slack/slack-payloads.js";
import { API_TOKENS, CI_SECRET, OTHER_SECRET } from "./api-client.js";

/** `npm test` runs a few hundred cases per property; `npm run test:chaos` sets FUZZ_RUNS=10000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** Each case is a real HTTP round trip (a few ms, more when it creates an ask): the time allowed grows with the runs. */
const TIME_LIMIT_MS = Math.max(60_000, RUNS * 60);

type Json = Record<string, unknown>;

interface FuzzedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

interface Reply {
  status: number;
  text: string;
}

let harness: SlackHarness;
/** Keep-alive connections to the listener, so ten thousand cases do not open ten thousand sockets. */
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
/** Callbacks go nowhere: the cancelled asks' deliveries succeed at once and touch no network. */
const callbackSender: CallbackSender = { send: async () => 200 };
/** Asks made in the setup (then cancelled), and the threads they opened: fuzzed requests name them too. */
const known = { ciAsks: [] as string[], otherAsks: [] as string[], threads: [] as string[] };

async function send(request: FuzzedRequest): Promise<Reply> {
  const response = await fetch(`${harness.baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
    dispatcher,
  });
  return { status: response.status, text: await response.text() };
}

function bearer(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` };
}

async function createKnown(secret: string): Promise<{ id: string; thread: string }> {
  const body = JSON.stringify({ channel: `slack:${CHANNEL}`, ask: { type: "confirm", question: "Set up?" } });
  const created = await send({
    method: "POST",
    path: "/v1/asks",
    headers: { ...bearer(secret), "content-type": "application/json" },
    body,
  });
  expect(created.status).toBe(201);
  const id = String((JSON.parse(created.text) as Json).id);
  await harness.engine.idle();
  expect((await send({ method: "DELETE", path: `/v1/asks/${id}`, headers: bearer(secret) })).status).toBe(200);
  await harness.engine.idle();
  const ask = harness.store.db.prepare("SELECT session_id FROM asks WHERE id = ?").get(id) as { session_id: string };
  const session = harness.store.db.prepare("SELECT * FROM sessions WHERE id = ?").get(ask.session_id) as Json;
  return { id, thread: String(session.thread) };
}

beforeAll(async () => {
  harness = await new SlackHarness({ apiTokens: API_TOKENS, callbackSender }).start();
  for (const secret of [CI_SECRET, CI_SECRET, OTHER_SECRET]) {
    const { id, thread } = await createKnown(secret);
    (secret === CI_SECRET ? known.ciAsks : known.otherAsks).push(id);
    known.threads.push(thread);
  }
});

afterAll(async () => {
  await harness?.close();
  await dispatcher.close();
});

// ---- values -------------------------------------------------------------------------------------------------------

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { deeper: value };
  return value;
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)) }),
  fc.constantFrom("", " ", "__proto__", "constructor", "<!channel>", "@everyone", "'; DROP TABLE asks; --", "\u202e\u0000", "%zz", "../"),
);
/** Wrong types, prototype keys and deep nesting, wherever a field is expected. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.constantFrom(null, 0, -1, 1e308, true, false, [], {}),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}')),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: 20, max: 3000 }).map(nested),
);
const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: oddValue });

const question = fc.oneof(
  fc.constantFrom("Ship release 1.4 to production?", "Which region?", "   ", ""),
  text,
  fc.integer({ min: 7990, max: 8010 }).map((length) => "q".repeat(length)),
);
const optionValue = fc.oneof(fc.constantFrom("staging", "production", "eu", "us"), text);
const option = fc.oneof(optionValue, fc.record({ value: maybe(optionValue), label: maybe(text) }, { requiredKeys: [] }), oddValue);
const field = fc.record(
  {
    name: maybe(fc.constantFrom("host", "api_key", "__proto__", "1bad", "")),
    label: maybe(text),
    type: maybe(fc.constantFrom("text", "password", "number", "toggle", "date")),
    required: maybe(fc.boolean()),
  },
  { requiredKeys: [] },
);
/** Any dialect of ask_user (typed, candidates, choices, question only), keys present or not, values right or wrong. */
const fuzzAsk = fc.record(
  {
    question: maybe(question),
    type: maybe(fc.constantFrom(...ASK_TYPES, "approval", "CONFIRM", "")),
    title: maybe(fc.oneof(text, fc.constant("t".repeat(201)))),
    options: maybe(fc.array(option, { maxLength: 6 })),
    fields: maybe(fc.array(field, { maxLength: 4 })),
    candidates: maybe(fc.array(option, { maxLength: 5 })),
    choices: maybe(fc.array(option, { maxLength: 5 })),
    default: maybe(fc.oneof(fc.boolean(), optionValue)),
    timeout_s: maybe(fc.oneof(fc.integer(), fc.double())),
    allow_other: maybe(fc.boolean()),
    colour: oddValue,
  },
  { requiredKeys: [] },
);
/** Asks that parse, so that some fuzzed bodies really create one. */
const validAsk = fc.oneof(
  fc.record({ type: fc.constant("confirm"), question: fc.constantFrom("Ship it?", "Deploy 1.4?") }),
  fc.record({
    question: fc.string({ minLength: 1, maxLength: 200 }).filter((value) => value.trim().length > 0),
    candidates: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({
    type: fc.constantFrom("select", "buttons", "multiselect"),
    question: fc.constant("Where?"),
    options: fc.constant(["eu", "us"]),
    title: fc.string({ maxLength: 200 }),
  }),
  fc.record({ type: fc.constant("form"), question: fc.constant("Details?"), fields: fc.constant([{ name: "host", type: "password" }]) }),
);
const interrupt = fc.record(
  {
    status: maybe(fc.constant("INTERRUPT")),
    intent: maybe(fc.constant("HUMAN_INTERVENTION")),
    data: maybe(
      fc.record(
        { question: maybe(question), candidates: maybe(fc.array(option, { maxLength: 4 })), extra: oddValue },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const channel = fc.oneof(
  { weight: 4, arbitrary: fc.constant(`slack:${CHANNEL}`) },
  fc.stringMatching(/^slack:[A-Za-z0-9_.-]{1,64}$/),
  fc.constantFrom(
    "discord:123456789012345678",
    "slack:",
    "slack",
    ":C1",
    "slack:C1:C2",
    "teams:19abc",
    `SLACK:${CHANNEL}`,
    ` slack:${CHANNEL}`,
  ),
  fc.constant(`slack:${"C".repeat(65)}`),
  text,
);
const answerers = fc.oneof(
  fc.array(maybe(fc.constantFrom(`slack:${ALICE}`, "slack:U_BOB", "discord:1234", "slack:", ALICE)), { maxLength: 4 }),
  fc.constant(Array.from({ length: 51 }, (_, index) => `slack:U${index}`)),
);
const metadata = fc.oneof(
  fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
  fc.integer({ min: 20, max: 40 }).map((depth) => ({ deep: nested(depth) })),
  fc.integer({ min: 3990, max: 4010 }).map((length) => ({ blob: "m".repeat(length) })),
);
const callbackUrl = fc.oneof(
  fc.constantFrom("https://ci.example.com/parley", "http://127.0.0.1:9/cb", "ftp://x", "javascript:alert(1)", "http://", "https://[::1"),
  fc.webUrl(),
  text,
);

// ---- requests -----------------------------------------------------------------------------------------------------

const authorization = fc.oneof(
  { weight: 12, arbitrary: fc.constant(bearer(CI_SECRET)) },
  { weight: 1, arbitrary: fc.constant(bearer(OTHER_SECRET)) },
  fc.constantFrom<Record<string, string>>(
    {},
    bearer("not-a-token-at-all-0000"),
    { authorization: CI_SECRET },
    { authorization: "Basic Y2k6eA==" },
  ),
);
/** Header values fetch can send: printable Latin-1, no control characters. */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f && (code < 0x80 || code > 0x9f))
      .map((code) => String.fromCharCode(code)),
    maxLength,
  });
const idempotencyKey = fc.option(
  fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/),
    fc.constantFrom("deploy-812", "k".repeat(200), "k".repeat(201), "é", "ÿ!"),
    headerText(300),
  ),
  { nil: undefined },
);
const contentType = fc.option(
  fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"),
  {
    nil: undefined,
  },
);

/** Id segments of a path: encoded text, and raw %-escapes (malformed ones too), but never empty or a dot segment. */
function idSegment(): fc.Arbitrary<string> {
  const rawPiece = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/),
    fc.constantFrom("%", "%z", "%zz", "%E0%A4", "%C0%AF", "%FF", "%00", "%2F", "%25", "%2e", "%u0041", "%%", "~", "!"),
    fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, "0")}`),
  );
  return fc
    .oneof(
      fc.constantFrom(...known.ciAsks, ...known.otherAsks),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).map(encodeURIComponent),
      fc.array(rawPiece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join("")),
      fc.integer({ min: 1000, max: 6000 }).map((length) => "i".repeat(length)),
    )
    .filter((segment) => ![".", ".."].includes(segment.toLowerCase().replaceAll("%2e", ".")));
}

/** Whether the server would read this query as a wait of more than 0 s: those are left out, to keep the run fast. */
function waitsLonger(query: string): boolean {
  const wait = new URLSearchParams(query).get("wait");
  if (wait === null || wait.trim() === "") return false;
  const seconds = Number(wait);
  return Number.isFinite(seconds) && seconds > 0 && seconds <= 60;
}

const query = fc
  .oneof(
    fc.constant(""),
    fc
      .constantFrom("0", "-0", "0.0", "00", "0e5", "0x0", "", " ", "abc", "61", "60.0001", "-1", "NaN", "Infinity", "1e400", "%", "%zz")
      .map((wait) => `?wait=${wait}`),
    fc.string({ maxLength: 12 }).map((wait) => `?wait=${encodeURIComponent(wait)}`),
    fc.constantFrom("?wait=0&wait=5", "?=", "?&&", "?wait", "?x=1&wait=0", "?wait=%20"),
  )
  .filter((text) => !waitsLonger(text));

function postBody(): fc.Arbitrary<string | Uint8Array> {
  const place = { thread: fc.oneof(fc.constantFrom(...known.threads), fc.stringMatching(/^[0-9]{10}\.[0-9]{6}$/), text, oddValue) };
  const plausible = fc.record(
    {
      channel: fc.oneof({ weight: 5, arbitrary: fc.constant(`slack:${CHANNEL}`) }, channel),
      thread: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known.threads) }, place.thread),
      answerers: fc.array(fc.constantFrom(`slack:${ALICE}`, "slack:U_BOB"), { maxLength: 2 }),
      ask: validAsk,
      metadata: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
      callback_url: fc.constant("https://ci.example.com/parley"),
    },
    { requiredKeys: ["channel", "ask"] },
  );
  const fuzzed = fc.record(
    {
      channel: maybe(channel),
      thread: place.thread,
      answerers: maybe(answerers),
      ask: fc.oneof(validAsk, fuzzAsk, oddValue),
      interrupt: maybe(interrupt),
      metadata: maybe(metadata),
      callback_url: maybe(callbackUrl),
    },
    { requiredKeys: [] },
  );
  const genericAgent = fc.record({ channel, interrupt });
  const withStrayKey = fc.tuple(fuzzed, text, oddValue).map(([body, key, value]) => JSON.parse(JSON.stringify({ ...body, [key]: value })));
  const json = fc.oneof(
    { weight: 3, arbitrary: plausible },
    { weight: 5, arbitrary: fuzzed },
    { weight: 1, arbitrary: genericAgent },
    { weight: 1, arbitrary: withStrayKey },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  );
  return fc.oneof(
    { weight: 12, arbitrary: json.map((value) => JSON.stringify(value) ?? "null") },
    // Raw text that is not JSON, or only nearly.
    {
      weight: 2,
      arbitrary: fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom("", "{not json", "{", "[", "nul", '{"channel":', "\u0000")),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    // Nesting as deep as 64 KB allows.
    {
      weight: 1,
      arbitrary: fc.integer({ min: 100, max: 32_000 }).map((depth) => {
        const deep = "[".repeat(depth) + "]".repeat(depth);
        return `{"channel":"slack:${CHANNEL}","ask":{"question":"Deep?"},"metadata":{"a":${deep}}}`;
      }),
    },
    // Huge: around the 64 KB limit and well past it.
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 60_000, max: 300_000 })
        .map((length) =>
          JSON.stringify({ channel: `slack:${CHANNEL}`, ask: { question: "Big?" }, metadata: { blob: "x".repeat(length) } }),
        ),
    },
  );
}

const waitS = fc.constantFrom<unknown>(0, -1, "5", null, true, [], Number.NaN);
const mcpArguments = () =>
  fc.oneof(
    fc.record(
      {
        question: fc.oneof({ weight: 3, arbitrary: fc.constant("Ship it?") }, question, oddValue),
        type: maybe(fc.constantFrom(...ASK_TYPES)),
        options: maybe(fc.array(option, { maxLength: 3 })),
        channel: fc.oneof({ weight: 3, arbitrary: fc.constant(`slack:${CHANNEL}`) }, channel, oddValue),
        thread: maybe(fc.constantFrom(...known.threads)),
        answerers: maybe(answerers),
        ask_id: maybe(fc.constantFrom(...known.ciAsks, ...known.otherAsks, "nope")),
        // Always there and never a real wait: an ask_user that creates an ask returns at once.
        wait_s: waitS,
      },
      { requiredKeys: ["question", "channel", "wait_s"] },
    ),
    fc.record({ ask_id: maybe(fc.constantFrom(...known.ciAsks, ...known.otherAsks, "nope")), wait_s: waitS }),
    fc.constantFrom<unknown>(null, "args", [], 7),
  );
/** JSON-RPC messages an MCP client would send, and ones that are only nearly that. */
const rpc = () => {
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }));
  const toolCall = fc.record({ name: fc.constantFrom("ask_user", "get_ask_result", "cancel_ask", "nope"), arguments: mcpArguments() });
  const initialize = fc.record(
    {
      protocolVersion: maybe(fc.constantFrom("2025-06-18", "2025-03-26", "1999-01-01")),
      capabilities: maybe(fc.constant({})),
      clientInfo: maybe(fc.constant({ name: "fuzz", version: "1" })),
    },
    { requiredKeys: [] },
  );
  const plausible = fc.oneof(
    { weight: 4, arbitrary: fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("tools/call"), params: toolCall }) },
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constant("initialize"), params: initialize }),
    fc.record({ jsonrpc: fc.constant("2.0"), id, method: fc.constantFrom("tools/list", "ping", "resources/list") }),
    fc.record({ jsonrpc: fc.constant("2.0"), method: fc.constantFrom("notifications/initialized", "notifications/cancelled") }),
  );
  const fuzzed = fc.record(
    {
      jsonrpc: maybe(fc.constant("2.0")),
      id: maybe(id),
      method: maybe(fc.constantFrom("initialize", "tools/list", "tools/call", "ping", "notifications/initialized", "")),
      params: fc.oneof(toolCall, initialize, oddValue),
    },
    { requiredKeys: [] },
  );
  return fc.oneof({ weight: 3, arbitrary: plausible }, fuzzed);
};

function requests(): fc.Arbitrary<FuzzedRequest> {
  const post = fc
    .record({ auth: authorization, key: idempotencyKey, type: contentType, body: postBody() })
    .map(({ auth, key, type, body }) => ({
      method: "POST",
      path: "/v1/asks",
      headers: {
        ...auth,
        ...(key === undefined ? {} : { "idempotency-key": key }),
        ...(type === undefined ? {} : { "content-type": type }),
      },
      body,
    }));
  const read = fc
    .record({ auth: authorization, id: idSegment(), query })
    .map(({ auth, id, query }) => ({ method: "GET", path: `/v1/asks/${id}${query}`, headers: auth }));
  const cancel = fc
    .record({ auth: authorization, id: idSegment(), query: fc.constantFrom("", "?", "?wait=1") })
    .map(({ auth, id, query }) => ({ method: "DELETE", path: `/v1/asks/${id}${query}`, headers: auth }));
  const message = rpc();
  const mcp = fc
    .record({
      auth: authorization,
      accept: fc.oneof(
        { weight: 6, arbitrary: fc.constant("application/json, text/event-stream") },
        fc.constantFrom("application/json", "*/*", "text/html"),
      ),
      body: fc.oneof(
        { weight: 6, arbitrary: message.map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }).map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? "null") },
        { weight: 1, arbitrary: fc.constantFrom("", "{", "[]", "nope") },
      ),
      method: fc.constantFrom("POST", "POST", "POST", "POST", "GET", "DELETE"),
    })
    .map(({ auth, accept, body, method }) => ({
      method,
      path: "/mcp",
      headers: { ...auth, accept, "content-type": "application/json" },
      ...(method === "POST" ? { body } : {}),
    }));
  return fc.oneof(
    { weight: 8, arbitrary: post },
    { weight: 3, arbitrary: read },
    { weight: 3, arbitrary: cancel },
    { weight: 2, arbitrary: mcp },
  );
}

// ---- the property -------------------------------------------------------------------------------------------------

function slackPosts(): number {
  return harness.slack.callsOf("chat.postMessage").length;
}

/** Cancels every ask still open (MCP's ask_user returns at once with wait_s 0 and leaves its ask open). */
async function cancelOpenAsks(): Promise<void> {
  const open = harness.store.db.prepare("SELECT id FROM asks WHERE status = 'pending'").all() as Array<{ id: string }>;
  for (const { id } of open) {
    const outcomes = await Promise.all(API_TOKENS.map((token) => harness.engine.api.cancel(token.name, id)));
    expect(
      outcomes.some((outcome) => outcome.kind === "cancelled"),
      `ask ${id} could not be cancelled`,
    ).toBe(true);
  }
  await harness.engine.idle();
}

/** How many cases ended in each method, route and status: DEBUG_FUZZ=1 prints them. */
const statuses = new Map<string, number>();

describe("fuzzing the HTTP API and the MCP endpoint", () => {
  it(
    "never answers 5xx, answers every /v1 4xx with a JSON error, and posts nothing for a request that made no ask",
    async () => {
      await fc.assert(
        fc.asyncProperty(requests(), async (request) => {
          const before = slackPosts();
          const reply = await send(request);
          const tally = `${request.method} ${request.path.startsWith("/mcp") ? "/mcp" : request.path.split("/")[2]} ${reply.status}`;
          statuses.set(tally, (statuses.get(tally) ?? 0) + 1);
          expect(reply.status, reply.text.slice(0, 300)).toBeLessThan(500);
          if (request.path.startsWith("/v1/") && reply.status >= 400) {
            const body = JSON.parse(reply.text) as Json;
            expect(typeof body.error, reply.text.slice(0, 300)).toBe("string");
            expect(String(body.error)).toMatch(/^ERROR: /);
          }
          const created = request.method === "POST" && request.path === "/v1/asks" && reply.status === 201;
          const mcpOk = request.path === "/mcp" && reply.status === 200;
          if (created) {
            // A body that was valid after all: its ask is cancelled, so that its thread is free for the next case.
            const id = String((JSON.parse(reply.text) as Json).id);
            const cancelled = await send({
              method: "DELETE",
              path: `/v1/asks/${id}`,
              headers: { authorization: request.headers.authorization! },
            });
            expect(cancelled.status).toBe(200);
          }
          if (mcpOk) await cancelOpenAsks();
          await harness.engine.idle();
          if (!created && !mcpOk) expect(slackPosts(), `${request.method} ${request.path} ${reply.status} posted to Slack`).toBe(before);
        }),
        { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
      );
      if (process.env.DEBUG_FUZZ)
        console.log(
          [...statuses]
            .sort()
            .map(([key, count]) => `${key}: ${count}`)
            .join("\n"),
        );
      // The run made asks, and refused many more.
      expect([...statuses.keys()].some((key) => key.endsWith(" 201"))).toBe(true);
      expect([...statuses.keys()].some((key) => key.endsWith(" 400"))).toBe(true);
      expect(await harness.store.db.prepare("SELECT COUNT(*) AS n FROM asks WHERE status = 'pending'").get()).toEqual({ n: 0 });
    },
    TIME_LIMIT_MS + 10_000,
  );
});
