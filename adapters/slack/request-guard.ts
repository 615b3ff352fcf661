import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { parse as parseQuery } from "node:querystring";
import { isValidSlackRequest } from "@slack/bolt";
import { z } from "zod";
import { type EventAckGate, heldEventId } from "./event-ack-gate.js";

/** Interactivity payloads Bolt reads `user.id` from before any listener runs. */
const INTERACTION_TYPES = [
  "block_actions",
  "block_suggestion",
  "view_submission",
  "view_closed",
  "shortcut",
  "message_action",
  "interactive_message",
  "dialog_submission",
] as const;
const isInteractionType = (type: string) => (INTERACTION_TYPES as readonly string[]).includes(type);

/** Bolt reuses a body already read into `rawBody` instead of reading the stream again. */
type BufferedRequest = IncomingMessage & { rawBody?: Buffer };

/**
 * Wraps Bolt's HTTP request listener for the events endpoint. It reads the body itself, refusing more than
 * `limitBytes` with 413 before anything is parsed, and answers 400 (or 401 when unsigned) for a body Bolt
 * cannot read: Bolt 5.1 reads `body.ssl_check` unguarded, so a signed `null` would reject a promise nobody
 * handles and leave the request hanging, and an envelope without `user` or `event` makes it answer 500.
 * Everything else goes to Bolt unchanged.
 */
export function guardSlackRequests(
  listener: RequestListener,
  options: { path: string; limitBytes: number; signingSecret: string; gate?: EventAckGate },
): RequestListener {
  return (request, response) => {
    if (request.method !== "POST" || (request.url ?? "").split("?")[0] !== options.path) return listener(request, response);
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > options.limitBytes) return refuse(request, response, 413);
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > options.limitBytes) {
        refused = true;
        refuse(request, response, 413);
      } else chunks.push(chunk);
    });
    request.on("end", () => {
      if (refused) return;
      const rawBody = Buffer.concat(chunks);
      if (!isSlackEnvelope(rawBody.toString("utf8"), request.headers["content-type"])) {
        return refuse(request, response, isSigned(request, rawBody, options.signingSecret) ? 400 : 401);
      }
      (request as BufferedRequest).rawBody = rawBody;
      const eventId = options.gate ? heldEventId(readJson(rawBody, request.headers["content-type"])) : undefined;
      if (options.gate && eventId) holdAcknowledgement(response, eventId, options.gate);
      listener(request, response);
    });
    request.on("error", () => refuse(request, response, 400));
  };
}

/** What Bolt dereferences before any listener runs: an event's `event.type`, an interaction's `user.id`. */
const envelopeSchema = z.union([
  z.object({ type: z.literal("event_callback"), event: z.object({ type: z.string() }) }),
  z.object({ type: z.enum(INTERACTION_TYPES), user: z.object({ id: z.string() }) }),
  z.object({ type: z.string().refine((type) => type !== "event_callback" && !isInteractionType(type)) }),
]);

/**
 * Slack sends JSON objects, or forms whose `payload` field is one; a form without `payload` is a slash command.
 * Anything else, or an envelope missing what Bolt reads unguarded, is refused here rather than inside Bolt.
 */
export function isSlackEnvelope(text: string, contentType: string | undefined): boolean {
  let json = text;
  if (contentType === "application/x-www-form-urlencoded") {
    const payload = parseQuery(text).payload;
    if (payload === undefined) return true;
    if (typeof payload !== "string") return false;
    json = payload;
  }
  try {
    return envelopeSchema.safeParse(JSON.parse(json)).success;
  } catch {
    return false;
  }
}

function readJson(rawBody: Buffer, contentType: string | undefined): unknown {
  if (contentType !== "application/json") return undefined;
  try {
    return JSON.parse(rawBody.toString("utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Bolt acknowledges an event (200) before its listener runs; for an event the gate holds, that 200 is kept back
 * until the listener has stored the event. Any other answer (401 for a bad signature) goes out at once.
 */
function holdAcknowledgement(response: ServerResponse, eventId: string, gate: EventAckGate): void {
  const writeHead = response.writeHead.bind(response);
  const end = response.end.bind(response);
  let status: number | undefined;
  let headArgs: unknown[] = [];
  response.writeHead = ((code: number, ...rest: unknown[]) => {
    status = code;
    headArgs = [code, ...rest];
    if (code !== 200) return (writeHead as (...args: unknown[]) => ServerResponse)(...headArgs);
    return response;
  }) as ServerResponse["writeHead"];
  response.end = ((...args: unknown[]) => {
    if (status !== undefined && status !== 200) return (end as (...args: unknown[]) => ServerResponse)(...args);
    gate.hold(eventId, () => {
      if (status !== undefined) (writeHead as (...args: unknown[]) => ServerResponse)(...headArgs);
      (end as (...args: unknown[]) => ServerResponse)(...args);
    });
    return response;
  }) as ServerResponse["end"];
}

function isSigned(request: IncomingMessage, rawBody: Buffer, signingSecret: string): boolean {
  const signature = request.headers["x-slack-signature"];
  const timestamp = Number(request.headers["x-slack-request-timestamp"]);
  if (typeof signature !== "string") return false;
  return isValidSlackRequest({
    signingSecret,
    body: rawBody.toString("utf8"),
    headers: { "x-slack-signature": signature, "x-slack-request-timestamp": timestamp },
  });
}

/**
 * Answers without reading further, then closes gently: a socket destroyed while the client still sends gets a
 * reset that can reach the client before the answer does, so it is ended (the client reads the answer and goes)
 * and destroyed only if it lingers.
 */
function refuse(request: IncomingMessage, response: ServerResponse, status: 400 | 401 | 413): void {
  if (response.headersSent) return;
  response.once("finish", () => lingeringClose(request.socket));
  response.writeHead(status, { connection: "close" }).end();
}

/** How long a refused client may keep its connection after the answer went out. */
const LINGER_MS = 2000;

function lingeringClose(socket: Socket): void {
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
