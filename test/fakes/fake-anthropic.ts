import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { type Loopback, listenLoopback } from "../support/loopback.js";

export type FakeBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown };

export interface RecordedRequest {
  headers: IncomingMessage["headers"];
  body: {
    model: string;
    stream?: boolean;
    system?: unknown;
    tools?: Array<{ name: string; cache_control?: unknown }>;
    messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
    max_tokens: number;
  };
}

/**
 * A fault in the middle of an SSE stream, after the first text delta: `reset` destroys the connection (as a
 * proxy or a network drop would), `overloaded` sends an `event: error` frame (the API's way of giving up mid-stream).
 */
export type StreamFault = "reset" | "overloaded";

export type ScriptedTurn =
  | { content: FakeBlock[]; stopReason?: string; delayMs?: number; streamFault?: StreamFault }
  | { status: number; error?: string; headers?: Record<string, string> }
  | ((request: RecordedRequest) => ScriptedTurn);

let toolUseCounter = 0;
export function toolUse(name: string, input: unknown, id = `toolu_${++toolUseCounter}`): FakeBlock {
  return { type: "tool_use", id, name, input };
}
export function text(value: string): FakeBlock {
  return { type: "text", text: value };
}
export function ask(input: unknown): ScriptedTurn {
  return { content: [toolUse("ask_user", input)], stopReason: "tool_use" };
}
export function reply(value: string): ScriptedTurn {
  return { content: [text(value)], stopReason: "end_turn" };
}

/** The tool_result blocks of the newest user message of a request. */
export function lastToolResults(request: RecordedRequest | undefined): Array<{ tool_use_id: string; content: string; is_error?: boolean }> {
  const last = request?.body.messages.at(-1);
  if (!last || typeof last.content === "string") return [];
  return last.content.filter((block) => block.type === "tool_result") as never;
}

/** The `usage` of a response, with the 5-minute / 1-hour split of cache writes the API reports. */
export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** What input tokens cost, relative to the base input price: Anthropic's prompt-caching prices. */
const INPUT_PRICE = { uncached: 1, write5m: 1.25, write1h: 2, read: 0.1 } as const;

/** A request's input tokens in base-input-token equivalents: what its input is billed, as a count of plain tokens. */
export function billedInputTokens(usage: FakeUsage): number {
  const write1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const write5m = usage.cache_creation?.ephemeral_5m_input_tokens ?? usage.cache_creation_input_tokens - write1h;
  return (
    usage.input_tokens * INPUT_PRICE.uncached +
    write5m * INPUT_PRICE.write5m +
    write1h * INPUT_PRICE.write1h +
    usage.cache_read_input_tokens * INPUT_PRICE.read
  );
}

/** The fake's tokenizer: four characters a token, rounded up. Deterministic, and close enough for English and JSON. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

type Ttl = "5m" | "1h";
const TTL_MS: Record<Ttl, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

export interface PromptCacheOptions {
  /** The cache's clock, in ms; the test moves it to play a person answering minutes later. Date.now by default. */
  now?: () => number;
  /** A breakpoint whose prefix is shorter is not cached (1,024 tokens for most Sonnet and Opus models). */
  minimumTokens?: number;
  /** How many blocks before each breakpoint the API looks back for an earlier cached prefix. */
  lookbackBlocks?: number;
}

/** One request as the prompt cache billed it. */
export interface RequestBilling {
  at: number;
  usage: FakeUsage;
  /** billedInputTokens(usage). */
  billed: number;
}

/** One block of the prompt in the API's order (each tool, the system blocks, each message's blocks), and its breakpoint. */
interface PromptBlock {
  text: string;
  breakpoint?: Ttl;
}

/** Why the API would refuse this request's cache_control (400 invalid_request_error), or undefined. */
export function cacheControlError(body: RecordedRequest["body"]): string | undefined {
  const breakpoints: Ttl[] = [];
  for (const control of promptControls(body)) {
    if (control === undefined) continue;
    const { type, ttl = "5m" } = control as { type?: unknown; ttl?: unknown };
    if (type !== "ephemeral") return `cache_control.type: expected "ephemeral"`;
    if (ttl !== "5m" && ttl !== "1h") return `cache_control.ttl: expected "5m" or "1h"`;
    breakpoints.push(ttl);
  }
  if (breakpoints.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints.length}.`;
  const firstShort = breakpoints.indexOf("5m");
  if (firstShort !== -1 && breakpoints.lastIndexOf("1h") > firstShort)
    return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block (order: tools, system, messages)";
  return undefined;
}

/** The API's rule that each tool_use is answered by a tool_result in the very next message (else a 400). */
export function toolPairingError(body: RecordedRequest["body"]): string | undefined {
  const blocks = (content: unknown) =>
    Array.isArray(content) ? (content as Array<{ type?: string; id?: string; tool_use_id?: string }>) : [];
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "assistant") continue;
    const answered = new Set(blocks(body.messages[index + 1]?.content).map((block) => block.tool_use_id));
    const unanswered = blocks(message.content).filter((block) => block.type === "tool_use" && !answered.has(block.id));
    if (unanswered.length > 0)
      return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.map((block) => block.id).join(", ")}`;
  }
  return undefined;
}

function promptControls(body: RecordedRequest["body"]): unknown[] {
  return promptParts(body).map((part) => part.cache_control);
}

/** The prompt's blocks in order, each as sent (cache_control included). */
function promptParts(body: RecordedRequest["body"]): Array<{ prefix: string; block: Record<string, unknown>; cache_control?: unknown }> {
  const parts: Array<{ prefix: string; block: Record<string, unknown>; cache_control?: unknown }> = [];
  const add = (prefix: string, block: Record<string, unknown>) => parts.push({ prefix, block, cache_control: block.cache_control });
  for (const tool of body.tools ?? []) add("tool", tool as Record<string, unknown>);
  if (typeof body.system === "string") add("system", { type: "text", text: body.system });
  else if (Array.isArray(body.system)) for (const block of body.system as Array<Record<string, unknown>>) add("system", block);
  for (const message of body.messages) {
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    for (const block of content) add(message.role, block);
  }
  return parts;
}

function promptBlocks(body: RecordedRequest["body"]): PromptBlock[] {
  return promptParts(body).map(({ prefix, block, cache_control }) => {
    // The cached prefix is the content: where the breakpoints sit, and their ttl, are not part of it.
    const { cache_control: _, ...content } = block;
    const ttl = cache_control ? ((cache_control as { ttl?: Ttl }).ttl ?? "5m") : undefined;
    return { text: `${prefix}:${JSON.stringify(content)}`, ...(ttl ? { breakpoint: ttl } : {}) };
  });
}

/**
 * The API's prompt cache, kept the way its documentation describes: an entry per prefix ending at a breakpoint,
 * keyed by the prefix's content, alive for its ttl from its last write or read. A request reads the longest live
 * prefix found at a breakpoint or up to `lookbackBlocks` blocks before one (A); it writes at the 1-hour price up to
 * its last 1-hour breakpoint (B) and at the 5-minute price up to its last breakpoint (C); the rest is uncached
 * input. Breakpoints shorter than `minimumTokens` cache nothing.
 */
export class PromptCacheModel {
  private readonly entries = new Map<string, { expiresAt: number; ttl: Ttl }>();
  readonly now: () => number;
  readonly minimumTokens: number;
  readonly lookbackBlocks: number;

  constructor(options: PromptCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.minimumTokens = options.minimumTokens ?? 1024;
    this.lookbackBlocks = options.lookbackBlocks ?? 20;
  }

  /** Bills one (valid) request's input and updates the cache as the API would. */
  bill(body: RecordedRequest["body"]): Omit<FakeUsage, "output_tokens"> {
    const now = this.now();
    const blocks = promptBlocks(body);
    const hash = createHash("sha256");
    const keys: string[] = [];
    const ends: number[] = [];
    let total = 0;
    for (const block of blocks) {
      hash.update(block.text).update("\u0000");
      keys.push(hash.copy().digest("hex"));
      total += estimateTokens(block.text);
      ends.push(total);
    }
    // Alive up to and including the instant its ttl runs out.
    const live = (index: number) => (this.entries.get(keys[index]!)?.expiresAt ?? -1) >= now;
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [{ index, ttl: block.breakpoint }] : []));

    let hit = -1;
    for (const { index } of breakpoints) {
      for (let candidate = index; candidate >= Math.max(0, index - this.lookbackBlocks); candidate--) {
        if (live(candidate)) {
          hit = Math.max(hit, candidate);
          break;
        }
      }
    }
    const read = hit === -1 ? 0 : ends[hit]!;
    const cacheable = breakpoints.filter(({ index }) => ends[index]! >= this.minimumTokens);
    const written = cacheable.filter(({ index }) => index > hit);
    const upTo1h = written.filter(({ ttl }) => ttl === "1h").at(-1);
    const upToLast = written.at(-1);
    const b = upTo1h ? ends[upTo1h.index]! : read;
    const c = upToLast ? ends[upToLast.index]! : read;

    // A read keeps its entry alive for its ttl again; every breakpoint leaves an entry alive for at least its own.
    if (hit !== -1) {
      const entry = this.entries.get(keys[hit]!)!;
      entry.expiresAt = Math.max(entry.expiresAt, now + TTL_MS[entry.ttl]);
    }
    for (const { index, ttl } of cacheable) {
      const entry = this.entries.get(keys[index]!);
      const expiresAt = now + TTL_MS[ttl];
      if (!entry || entry.expiresAt < now) this.entries.set(keys[index]!, { expiresAt, ttl });
      else this.entries.set(keys[index]!, { expiresAt: Math.max(entry.expiresAt, expiresAt), ttl: entry.ttl === "1h" ? "1h" : ttl });
    }
    return {
      input_tokens: total - c,
      cache_creation_input_tokens: c - read,
      cache_read_input_tokens: read,
      cache_creation: { ephemeral_5m_input_tokens: c - b, ephemeral_1h_input_tokens: b - read },
    };
  }
}

/**
 * A local stand-in for the Anthropic Messages API (POST /v1/messages), JSON and SSE.
 * It replays scripted turns in order and records every request.
 * Usage is a fixed 100 in / 20 out / 80 read unless `enablePromptCache` is called; then it is billed as the API would.
 */
export class FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  /** Set by enablePromptCache: every answered request's usage, in order. */
  readonly billing: RequestBilling[] = [];
  private promptCache: PromptCacheModel | undefined;
  private readonly turns: ScriptedTurn[] = [];
  private loopback: Loopback | undefined;
  url = "";
  /** Milliseconds from a request's last byte to its response's end: the model's own time, for the bench. */
  readonly serveTimesMs: number[] = [];
  /** Latency added to every answer, to play a slow model. */
  delayMs = 0;

  /** From now on, requests are billed against a prompt cache kept like the API's (see PromptCacheModel). */
  enablePromptCache(options: PromptCacheOptions = {}): PromptCacheModel {
    this.promptCache = new PromptCacheModel(options);
    return this.promptCache;
  }

  script(...turns: ScriptedTurn[]): this {
    this.turns.push(...turns);
    return this;
  }

  get remaining(): number {
    return this.turns.length;
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const received = performance.now();
        response.on("finish", () => this.serveTimesMs.push(performance.now() - received));
        void this.handle(request, Buffer.concat(chunks).toString("utf8"), response);
      });
    });
    this.loopback = await listenLoopback(server);
    this.url = this.loopback.url;
    return this;
  }

  async close(): Promise<void> {
    await this.loopback?.close();
  }

  private async handle(request: IncomingMessage, raw: string, response: import("node:http").ServerResponse): Promise<void> {
    if (request.method !== "POST" || !request.url?.startsWith("/v1/messages")) {
      response.writeHead(404).end();
      return;
    }
    const key = request.headers["x-api-key"] ?? request.headers.authorization;
    if (!key) {
      response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify(errorBody("authentication_error", "missing key")));
      return;
    }
    const recorded: RecordedRequest = { headers: request.headers, body: JSON.parse(raw) };
    this.requests.push(recorded);
    // The API checks cache_control before the model runs: a refused request uses no scripted turn.
    const refusal = cacheControlError(recorded.body) ?? toolPairingError(recorded.body);
    if (refusal) {
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(errorBody("invalid_request_error", refusal)));
      return;
    }
    let turn: ScriptedTurn = this.turns.shift() ?? { content: [text("(fake model: no scripted turn left)")], stopReason: "end_turn" };
    while (typeof turn === "function") turn = turn(recorded);
    const delay = this.delayMs + ("delayMs" in turn ? (turn.delayMs ?? 0) : 0);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if ("status" in turn) {
      response
        .writeHead(turn.status, { "content-type": "application/json", ...turn.headers })
        .end(JSON.stringify(errorBody(ERROR_TYPES[turn.status] ?? "api_error", turn.error ?? "scripted failure")));
      return;
    }
    const usage: FakeUsage = this.promptCache
      ? { ...this.promptCache.bill(recorded.body), output_tokens: estimateTokens(JSON.stringify(turn.content)) }
      : { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 80, cache_creation_input_tokens: 0 };
    if (this.promptCache) this.billing.push({ at: this.promptCache.now(), usage, billed: billedInputTokens(usage) });
    const message = {
      id: `msg_${this.requests.length}`,
      type: "message",
      role: "assistant",
      model: recorded.body.model,
      content: turn.content,
      stop_reason: turn.stopReason ?? (turn.content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage,
    };
    if (!recorded.body.stream) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    // Every SSE frame carries an `event:` line; the SDK ignores frames without one.
    const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send("message_start", {
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 0 } },
    });
    for (const [index, block] of message.content.entries()) {
      if (block.type === "text") {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
        if (turn.streamFault) {
          send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text.slice(0, 3) } });
          if (turn.streamFault === "overloaded") send("error", errorBody("overloaded_error", "Overloaded"));
          // Flushed first, so the client has started reading the stream when the connection goes.
          await new Promise((resolve) => setTimeout(resolve, 10));
          if (turn.streamFault === "reset") response.socket?.destroy();
          else response.end();
          return;
        }
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
      } else {
        send("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        });
        const json = JSON.stringify(block.input);
        const half = Math.floor(json.length / 2);
        send("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: json.slice(0, half) },
        });
        send("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: json.slice(half) },
        });
      }
      send("content_block_stop", { type: "content_block_stop", index });
    }
    send("message_delta", {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    send("message_stop", { type: "message_stop" });
    response.end();
  }
}

/** The error type the API puts in its body for each status. */
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

function errorBody(type: string, message: string) {
  return { type: "error", error: { type, message } };
}
