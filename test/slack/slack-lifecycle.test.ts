import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SlackAdapter } from "../../adapters/slack/slack-adapter.js";
import { Engine } from "../../src/engine/engine.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import type { ModelClient } from "../../src/ports/model-client.js";
import { MemorySessionStore } from "../../src/store/memory-session-store.js";
import { FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET } from "../fakes/fake-slack-signer.js";

let slack: FakeSlackApi;

beforeEach(async () => {
  slack = await new FakeSlackApi().start();
});

afterEach(async () => {
  await slack.close();
});

const unusedModel: ModelClient = {
  createMessage: () => Promise.reject(new Error("no model in this test")),
} as unknown as ModelClient;

describe("SlackAdapter start", () => {
  it("fails start() naming SLACK_BOT_TOKEN and Slack's invalid_auth when the bot token is wrong, and listens on nothing", async () => {
    const adapter = new SlackAdapter({
      botToken: "xoxb-wrong",
      signingSecret: FAKE_SIGNING_SECRET,
      apiUrl: slack.apiUrl,
      port: 0,
      host: "127.0.0.1",
      logger: SILENT_LOGGER,
      retryConfig: { retries: 0 },
    });
    const engine = new Engine({ store: new MemorySessionStore(), model: unusedModel, adapters: [adapter], logger: SILENT_LOGGER });
    await expect(adapter.start(engine, async () => ({ kind: "refused" }))).rejects.toMatchObject({
      code: "start-error",
      message: expect.stringContaining("Slack refused SLACK_BOT_TOKEN (invalid_auth)"),
      cause: { data: { error: "invalid_auth" } },
    });
    expect(adapter.port).toBeUndefined();
    await expect(adapter.stop()).resolves.toBeUndefined();
    expect(slack.callsOf("auth.test")).toEqual([expect.objectContaining({ ok: false, error: "invalid_auth" })]);
  });
});
