import type { IncomingMessage, ServerResponse } from "node:http";

/** The largest request body the API reads: an ask is a few KB; anything beyond this is refused with 413. */
export const API_MAX_BODY_BYTES = 64 * 1024;

/**
 * A body over the limit but under this is read to its end before the 413 goes out: closing a connection with bytes
 * unread resets it, and a proxy in front (the Slack ack front) could lose the 413 to that reset.
 */
const DRAIN_MAX_BYTES = 1024 * 1024;

export class BodyTooLarge extends Error {}

/** Reads the body up to `limit` bytes; past it BodyTooLarge is thrown (once the rest is drained, when it is small). */
export async function readBody(request: IncomingMessage, limit = API_MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > DRAIN_MAX_BYTES) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DRAIN_MAX_BYTES) throw new BodyTooLarge();
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit || declared > limit) throw new BodyTooLarge();
  return Buffer.concat(chunks).toString("utf8");
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent) return void response.end();
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  response.end(text);
}

/** The secret of `Authorization: Bearer <secret>`, if the header has that form. */
export function bearerSecret(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== "string") return undefined;
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  return match?.[1];
}
