import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type Loopback, listenLoopback } from "../support/loopback.js";
import { checkMessage, checkView } from "./fake-slack-limits.js";

export const FAKE_BOT_TOKEN = "xoxb-test-token";
export const FAKE_APP_TOKEN = "xapp-test-token";
export const FAKE_TEAM_ID = "T_PARLEY";
export const FAKE_BOT_USER_ID = "U_PARLEY_BOT";
export const FAKE_BOT_ID = "B_PARLEY_BOT";

export interface RecordedSlackCall {
  method: string;
  /** Form fields, with `blocks` and `view` decoded from their JSON strings. */
  params: Record<string, unknown>;
  /** Slack's answer: `ok` and, when refused, the error code. */
  ok: boolean;
  error?: string;
  /** The whole answer the fake gave, such as the new message's `ts`. */
  result: Record<string, unknown>;
}

/** A message the fake holds, as `conversations.replies` returns it. */
export interface FakeSlackMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  blocks?: unknown;
  /** `{ event_type, event_payload }`, kept as posted; returned only with `include_all_metadata`, as Slack does. */
  metadata?: Record<string, unknown>;
}

export interface FakeSlackUser {
  id: string;
  name: string;
  isAdmin?: boolean;
  isOwner?: boolean;
}

/**
 * A local stand-in for the Slack Web API (`POST /api/<method>`), pointed at by SLACK_API_URL.
 * It records every call, refuses payloads that break Block Kit limits the way Slack does, and serves
 * `response_url`s under `/respond/…`.
 */
export class FakeSlackApi {
  readonly calls: RecordedSlackCall[] = [];
  readonly responses: Array<{ path: string; body: Record<string, unknown> }> = [];
  readonly users = new Map<string, FakeSlackUser>();
  /** Channels where `assistant.threads.setStatus` is refused (an app without the scope or feature there). */
  readonly threadStatusRefusedIn = new Set<string>();
  /** Channels the bot is not in: every call naming one gets `not_in_channel`, as Slack answers. */
  readonly notInChannel = new Set<string>();
  /** Where `apps.connections.open` sends Socket Mode clients. */
  socketUrl = "";
  private readonly rateLimits = new Map<string, number>();
  private readonly usedTriggers = new Set<string>();
  /** Every message posted through the API, oldest first (the users' own messages are not known to the fake). */
  readonly messages: FakeSlackMessage[] = [];
  private tsCounter = 0;
  private loopback: Loopback | undefined;
  url = "";

  addUser(user: FakeSlackUser): this {
    this.users.set(user.id, user);
    return this;
  }

  /** Calls of `method` answer after this many milliseconds (a slow Slack). */
  readonly latency = new Map<string, number>();

  /** The next `count` calls of `method` answer 429 with `Retry-After: 0`. */
  rateLimit(method: string, count = 1): void {
    this.rateLimits.set(method, count);
  }

  callsOf(method: string): RecordedSlackCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => this.handle(request, Buffer.concat(chunks).toString("utf8"), response));
    });
    this.loopback = await listenLoopback(server);
    this.url = this.loopback.url;
    return this;
  }

  async close(): Promise<void> {
    await this.loopback?.close();
  }

  private handle(request: IncomingMessage, raw: string, response: ServerResponse): void {
    const path = request.url ?? "";
    if (path.startsWith("/respond/")) {
      this.responses.push({ path, body: JSON.parse(raw) as Record<string, unknown> });
      response.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const method = path.replace(/^\/api\//, "").split("?")[0] ?? "";
    const params = decode(request.headers["content-type"] ?? "", raw);
    const waiting = this.rateLimits.get(method) ?? 0;
    if (waiting > 0) {
      this.rateLimits.set(method, waiting - 1);
      this.calls.push({ method, params, ok: false, error: "ratelimited", result: {} });
      response.writeHead(429, { "retry-after": "0", "content-type": "application/json" }).end('{"ok":false,"error":"ratelimited"}');
      return;
    }
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "");
    const answer = this.answer(method, params, token);
    this.calls.push({
      method,
      params,
      ok: answer.ok === true,
      ...(typeof answer.error === "string" ? { error: answer.error } : {}),
      result: answer,
    });
    const reply = () => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    const delay = this.latency.get(method) ?? 0;
    if (delay > 0) setTimeout(reply, delay);
    else reply();
  }

  private answer(method: string, params: Record<string, unknown>, token: string): Record<string, unknown> {
    const expected = method === "apps.connections.open" ? FAKE_APP_TOKEN : FAKE_BOT_TOKEN;
    if (token !== expected) return { ok: false, error: "invalid_auth" };
    if (typeof params.channel === "string" && this.notInChannel.has(params.channel)) return { ok: false, error: "not_in_channel" };
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://parley.example/",
          team: "Parley",
          user: "parley",
          team_id: FAKE_TEAM_ID,
          user_id: FAKE_BOT_USER_ID,
          bot_id: FAKE_BOT_ID,
        };
      case "apps.connections.open":
        return { ok: true, url: this.socketUrl };
      case "chat.postMessage":
      case "chat.update": {
        const refused = checkMessage(params);
        if (refused) return { ok: false, error: refused.error, response_metadata: { messages: [refused.reason] } };
        if (method === "chat.update") {
          const stored = this.messages.find((message) => message.channel === params.channel && message.ts === params.ts);
          if (!stored) return { ok: false, error: "message_not_found" };
          stored.text = String(params.text ?? "");
          if (params.blocks !== undefined) stored.blocks = params.blocks;
          // chat.update keeps the message's metadata unless it passes new metadata.
          if (isRecord(params.metadata)) stored.metadata = params.metadata;
          return { ok: true, channel: params.channel, ts: stored.ts, message: { text: params.text, ts: stored.ts } };
        }
        const ts = this.nextTs();
        this.messages.push({
          channel: String(params.channel),
          ts,
          ...(typeof params.thread_ts === "string" ? { threadTs: params.thread_ts } : {}),
          text: String(params.text ?? ""),
          ...(params.blocks !== undefined ? { blocks: params.blocks } : {}),
          ...(isRecord(params.metadata) ? { metadata: params.metadata } : {}),
        });
        return { ok: true, channel: params.channel, ts, message: { text: params.text, ts } };
      }
      case "conversations.replies":
        return this.replies(params);
      case "conversations.history":
        return this.history(params);
      case "chat.postEphemeral":
        return typeof params.user === "string" && typeof params.text === "string"
          ? { ok: true, message_ts: this.nextTs() }
          : { ok: false, error: "invalid_arguments" };
      case "views.open": {
        const trigger = String(params.trigger_id ?? "");
        if (!trigger.startsWith("trigger-")) return { ok: false, error: "invalid_trigger_id" };
        if (this.usedTriggers.has(trigger)) return { ok: false, error: "exchanged_trigger_id" };
        this.usedTriggers.add(trigger);
        const refused = checkView(params.view);
        return refused
          ? { ok: false, error: refused.error, response_metadata: { messages: [refused.reason] } }
          : { ok: true, view: { id: `V${this.nextTs()}` } };
      }
      case "users.info":
        return this.userInfo(String(params.user));
      case "assistant.threads.setStatus":
        return this.threadStatusRefusedIn.has(String(params.channel_id)) ? { ok: false, error: "channel_not_found" } : { ok: true };
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  /**
   * A thread's messages oldest first, paged with `limit` and `cursor`. Slack also returns the parent (a user's
   * message the fake never saw), so here a thread is only the bot's own messages in it.
   */
  private replies(params: Record<string, unknown>): Record<string, unknown> {
    const thread = String(params.ts ?? "");
    const inThread = this.messages.filter(
      (message) => message.channel === params.channel && (message.ts === thread || message.threadTs === thread),
    );
    if (inThread.length === 0) return { ok: false, error: "thread_not_found" };
    const limit = Math.min(Math.max(Number(params.limit ?? 1000) || 1000, 1), 1000);
    const start = Number(params.cursor ?? 0) || 0;
    const page = inThread.slice(start, start + limit);
    const withMetadata = params.include_all_metadata === true || params.include_all_metadata === "true";
    const more = start + limit < inThread.length;
    return {
      ok: true,
      messages: page.map((message) => ({
        type: "message",
        user: FAKE_BOT_USER_ID,
        bot_id: FAKE_BOT_ID,
        text: message.text,
        ts: message.ts,
        thread_ts: message.threadTs ?? message.ts,
        ...(message.blocks !== undefined ? { blocks: message.blocks } : {}),
        ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}),
      })),
      has_more: more,
      response_metadata: { next_cursor: more ? String(start + limit) : "" },
    };
  }

  /** A channel's top-level messages, newest first as Slack returns them, up to `limit` (no paging: none needed). */
  private history(params: Record<string, unknown>): Record<string, unknown> {
    const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 999);
    const withMetadata = params.include_all_metadata === true || params.include_all_metadata === "true";
    const topLevel = this.messages.filter((message) => message.channel === params.channel && message.threadTs === undefined);
    return {
      ok: true,
      messages: topLevel
        .slice(-limit)
        .reverse()
        .map((message) => ({
          type: "message",
          user: FAKE_BOT_USER_ID,
          bot_id: FAKE_BOT_ID,
          text: message.text,
          ts: message.ts,
          ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}),
        })),
      has_more: topLevel.length > limit,
    };
  }

  private userInfo(id: string): Record<string, unknown> {
    const user = this.users.get(id);
    if (!user) return { ok: false, error: "user_not_found" };
    return {
      ok: true,
      user: {
        id,
        name: user.name,
        real_name: user.name,
        is_admin: user.isAdmin === true,
        is_owner: user.isOwner === true,
        profile: { display_name: user.name },
      },
    };
  }

  private nextTs(): string {
    this.tsCounter++;
    return `1800000000.${String(this.tsCounter).padStart(6, "0")}`;
  }
}

function decode(contentType: string, raw: string): Record<string, unknown> {
  if (contentType.includes("application/json")) return JSON.parse(raw || "{}") as Record<string, unknown>;
  const params: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
  for (const key of ["blocks", "view", "metadata"]) {
    if (typeof params[key] === "string") params[key] = JSON.parse(params[key] as string);
  }
  return params;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
