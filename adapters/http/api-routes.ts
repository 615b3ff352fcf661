import type { IncomingMessage, ServerResponse } from "node:http";
import type { AskApi } from "../../src/ports/ask-api.js";
import type { HttpRoute } from "../../src/ports/http-route.js";
import type { Logger } from "../../src/ports/logger.js";
import { BodyTooLarge, bearerSecret, readBody, sendJson } from "./http-io.js";
import type { RateLimit } from "./rate-limit.js";

/** A long-poll holds the request at most this long (DESIGN §12). */
export const MAX_WAIT_S = 60;
const MAX_IDEMPOTENCY_KEY_CHARS = 200;

export interface ApiRouteOptions {
  /** Read at each request: the routes are handed to a listener before the engine behind them is built. */
  api: () => AskApi;
  rateLimit: RateLimit;
  logger: Logger;
}

const UNAUTHORIZED = 'ERROR: Authorization: send "Authorization: Bearer <secret>" with a token from API_TOKENS or /parley tokens create';

/**
 * Checks the bearer token and the token's rate: the token's name, or undefined with 401 or 429 already sent.
 * Nothing else about the request is looked at before this passes.
 */
export async function authorize(options: ApiRouteOptions, request: IncomingMessage, response: ServerResponse): Promise<string | undefined> {
  const secret = bearerSecret(request);
  const token = secret === undefined ? undefined : await options.api().authenticate(secret);
  if (token === undefined) {
    sendJson(response, 401, { error: UNAUTHORIZED }, { "www-authenticate": 'Bearer realm="parley"' });
    return undefined;
  }
  const waitMs = options.rateLimit.take(token);
  if (waitMs > 0) {
    sendJson(
      response,
      429,
      { error: `ERROR: too many calls for token ${token}: retry after the Retry-After seconds` },
      {
        "retry-after": String(Math.ceil(waitMs / 1000)),
      },
    );
    return undefined;
  }
  return token;
}

/** Reads a JSON body; sends 413 or 400 and returns undefined when it cannot. */
export async function readJson(request: IncomingMessage, response: ServerResponse): Promise<{ body: unknown } | undefined> {
  let text: string;
  try {
    text = await readBody(request);
  } catch (error) {
    if (!(error instanceof BodyTooLarge)) throw error;
    sendJson(response, 413, { error: "ERROR: the body is over 64 KB: shorten the question or the metadata" }, { connection: "close" });
    return undefined;
  }
  try {
    return { body: JSON.parse(text) as unknown };
  } catch {
    sendJson(response, 400, { error: "ERROR: the body is not JSON: send a JSON object with Content-Type: application/json" });
    return undefined;
  }
}

/** The HTTP API (DESIGN §12): `POST /v1/asks`, `GET /v1/asks/{id}?wait=`, `DELETE /v1/asks/{id}`. */
export function apiRoutes(options: ApiRouteOptions): HttpRoute[] {
  const guarded =
    (handle: (token: string, request: IncomingMessage, response: ServerResponse) => Promise<void>) =>
    (request: IncomingMessage, response: ServerResponse) => {
      const run = async () => {
        const token = await authorize(options, request, response);
        if (token !== undefined) await handle(token, request, response);
      };
      run().catch((error: unknown) => {
        options.logger.error({ err: error, method: request.method }, "api-request failed");
        sendJson(response, 500, {
          error: "internal error: nothing was changed if no ask id came back; retry with the same Idempotency-Key",
        });
      });
    };
  return [
    {
      path: "/v1/asks",
      methods: ["POST"],
      handler: guarded((token, request, response) => create(options.api(), token, request, response)),
    },
    {
      path: "/v1/asks/:id",
      methods: ["GET", "DELETE"],
      handler: guarded((token, request, response) =>
        request.method === "DELETE" ? cancel(options.api(), token, request, response) : read(options.api(), token, request, response),
      ),
    },
  ];
}

async function create(api: AskApi, token: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const key = request.headers["idempotency-key"];
  if (key !== undefined && (typeof key !== "string" || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS))
    return sendJson(response, 400, { error: `ERROR: Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters` });
  const parsed = await readJson(request, response);
  if (!parsed) return;
  const outcome = await api.create(token, parsed.body, key);
  if (outcome.kind === "invalid") return sendJson(response, 400, { error: outcome.error });
  if (outcome.kind === "conflict") return sendJson(response, 409, { error: outcome.error });
  sendJson(response, outcome.kind === "created" ? 201 : 200, outcome.view, { location: `/v1/asks/${outcome.view.id}` });
}

async function read(api: AskApi, token: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://parley");
  const id = askIdOf(url);
  const waitText = url.searchParams.get("wait");
  const wait = waitText === null ? 0 : Number(waitText);
  if (!Number.isFinite(wait) || wait < 0 || wait > MAX_WAIT_S || (waitText !== null && waitText.trim() === ""))
    return sendJson(response, 400, { error: `ERROR: wait must be a number of seconds from 0 to ${MAX_WAIT_S}` });
  // A caller that hangs up ends its long-poll: nothing waits for nobody.
  const hangUp = new AbortController();
  response.once("close", () => hangUp.abort());
  const view = await api.get(token, id, wait * 1000, hangUp.signal);
  if (!view) return sendJson(response, 404, { error: `ERROR: no ask ${id} for this token` });
  sendJson(response, 200, view);
}

async function cancel(api: AskApi, token: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const id = askIdOf(new URL(request.url ?? "/", "http://parley"));
  const outcome = await api.cancel(token, id);
  if (outcome.kind === "unknown") return sendJson(response, 404, { error: `ERROR: no ask ${id} for this token` });
  if (outcome.kind === "ended")
    return sendJson(response, 409, { error: `ERROR: the ask already ended (${outcome.view.status})`, ask: outcome.view });
  sendJson(response, 200, outcome.view);
}

function askIdOf(url: URL): string {
  const raw = url.pathname.split("/")[3] ?? "";
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape names no ask: it reads as an id nobody has, so the answer is 404, not a crash.
    return raw;
  }
}
