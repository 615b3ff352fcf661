import type { IncomingMessage, ServerResponse } from "node:http";

/** The largest request body the API reads: an ask is a few KB; anything beyond this is refused with 413. */
export const API_MAX_BODY_BYTES = 64 * 1024;

export class BodyTooLarge extends Error {}

/** Reads the body up to `limit` bytes; past it the read stops and BodyTooLarge is thrown. */
export async function readBody(request: IncomingMessage, limit = API_MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
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
