import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes } from "../../adapters/http/api-routes.js";
import { RateLimit } from "../../adapters/http/rate-limit.js";
import { REQUEST_KEYS } from "../../src/api/ask-request.js";
import type { AskApi } from "../../src/ports/ask-api.js";
import { SlackHarness } from "../slack/slack-harness.js";
import { CHANNEL } from "../slack/slack-payloads.js";
import { API_TOKENS, ApiClient } from "./api-client.js";

interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
}

const spec = JSON.parse(readFileSync(join(import.meta.dirname, "../../openapi.json"), "utf8")) as OpenApi;
const RATE = 40;

let harness: SlackHarness;
beforeAll(async () => {
  harness = await new SlackHarness({ apiTokens: API_TOKENS, apiRateLimit: RATE }).start();
});
afterAll(async () => {
  await harness.close();
});

function documented(): string[] {
  return Object.entries(spec.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) =>
      Object.keys(operation.responses).map((status) => `${method.toUpperCase()} ${path} ${status}`),
    ),
  );
}

describe("openapi.json describes the API as it is", () => {
  it("names the same paths and methods as the routes", () => {
    const routes = apiRoutes({ api: () => ({}) as AskApi, rateLimit: new RateLimit(1), logger: console as never });
    const served = routes.flatMap((route) =>
      (route.methods ?? ["GET"]).map((method) => `${method} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    const listed = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual(served.sort());
  });

  it("lists the request keys the parser accepts, and the keys every ask is returned with", async () => {
    expect(Object.keys(spec.components.schemas.AskRequest!.properties).sort()).toEqual([...REQUEST_KEYS].sort());
    const created = await new ApiClient(harness.baseUrl).create({ channel: `slack:${CHANNEL}`, ask: { question: "Keys?" } });
    expect(Object.keys(created.body).sort()).toEqual([...spec.components.schemas.Ask!.required].sort());
  });

  it("documents every status the API answers, and the API answers every status documented", async () => {
    const api = new ApiClient(harness.baseUrl);
    const stranger = new ApiClient(harness.baseUrl, null);
    const seen = new Set<string>();
    const note = async (method: string, path: string, call: Promise<{ status: number }>) =>
      seen.add(`${method} ${path} ${(await call).status}`);
    const ask = { channel: `slack:${CHANNEL}`, ask: { type: "confirm", question: "Documented?" } };
    const post = (call: Promise<{ status: number }>) => note("POST", "/v1/asks", call);
    const one = (method: string, call: Promise<{ status: number }>) => note(method, "/v1/asks/{id}", call);

    const created = await api.create(ask, { "idempotency-key": "k1" });
    seen.add(`POST /v1/asks ${created.status}`);
    const id = String(created.body.id);
    await post(api.create(ask, { "idempotency-key": "k1" }));
    await post(api.create({ ...ask, metadata: { other: true } }, { "idempotency-key": "k1" }));
    await post(api.create({ channel: "nowhere" }));
    await post(stranger.create(ask));
    await post(api.create({ ...ask, metadata: { blob: "x".repeat(70_000) } }));
    await one("GET", api.get(id));
    await one("GET", api.get(id, 99));
    await one("GET", api.get("no-such-ask"));
    await one("GET", stranger.get(id));
    await one("DELETE", api.cancel("no-such-ask"));
    await one("DELETE", stranger.cancel(id));
    await one("DELETE", api.cancel(id));
    await one("DELETE", api.cancel(id));
    // Then past the token's rate: every route answers 429.
    for (let index = 0; index < RATE; index++) await api.get("x");
    await post(api.create(ask));
    await one("GET", api.get(id));
    await one("DELETE", api.cancel(id));
    expect([...seen].sort()).toEqual(documented().sort());
  });
});
