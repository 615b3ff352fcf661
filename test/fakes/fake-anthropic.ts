import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

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

/**
 * A local stand-in for the Anthropic Messages API (POST /v1/messages), JSON and SSE.
 * It replays scripted turns in order and records every request.
 */
export class FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  private readonly turns: ScriptedTurn[] = [];
  private server: Server | undefined;
  url = "";
  /** Milliseconds from a request's last byte to its response's end: the model's own time, for the bench. */
  readonly serveTimesMs: number[] = [];
  /** Latency added to every answer, to play a slow model. */
  delayMs = 0;

  script(...turns: ScriptedTurn[]): this {
    this.turns.push(...turns);
    return this;
  }

  get remaining(): number {
    return this.turns.length;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const received = performance.now();
        response.on("finish", () => this.serveTimesMs.push(performance.now() - received));
        void this.handle(request, Buffer.concat(chunks).toString("utf8"), response);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
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
    const message = {
      id: `msg_${this.requests.length}`,
      type: "message",
      role: "assistant",
      model: recorded.body.model,
      content: turn.content,
      stop_reason: turn.stopReason ?? (turn.content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 80, cache_creation_input_tokens: 0 },
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

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  return new FakeAnthropic().start();
}
