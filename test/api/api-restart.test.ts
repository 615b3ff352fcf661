import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BotProcess, freePort } from "../chaos/bot-process.js";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { ALICE, waitFor } from "../slack/slack-harness.js";
import { CHANNEL, tapCard } from "../slack/slack-payloads.js";
import { type Loopback, listenLoopback } from "../support/loopback.js";
import { ApiClient, CI_SECRET } from "./api-client.js";

/** DESIGN §12's recipe, as a receiver would write it: HMAC-SHA256 of "<timestamp>.<body>", keyed with sha256(secret) hex. */
function verify(secret: string, timestamp: string, body: string, signature: string): boolean {
  const key = createHash("sha256").update(secret).digest("hex");
  const expected = Buffer.from(`v1=${createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex")}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

interface Delivery {
  body: string;
  timestamp: string;
  signature: string;
  status: number;
}

/** A callback receiver that can be down, refuse, or accept; it records every delivery that reached it. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  answer = 503;
  private loopback: Loopback | undefined;

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        const delivery = {
          body,
          timestamp: String(request.headers["parley-timestamp"]),
          signature: String(request.headers["parley-signature"]),
          status: this.answer,
        };
        this.deliveries.push(delivery);
        response.writeHead(this.answer).end();
      });
    });
    this.loopback = await listenLoopback(server, this.port);
  }

  async stop(): Promise<void> {
    const loopback = this.loopback;
    this.loopback = undefined;
    await loopback?.close();
  }
}

let dir: string;
let anthropic: FakeAnthropic;
let slack: FakeSlackApi;
let bot: BotProcess;
let port: number;
let receiver: Receiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "parley-api-"));
  anthropic = await new FakeAnthropic().start();
  slack = await new FakeSlackApi().start();
  slack.addUser({ id: ALICE, name: "alice" });
  port = await freePort();
  receiver = new Receiver(await freePort());
  bot = new BotProcess(
    {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
      SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: "sk-test",
      DATABASE_PATH: join(dir, "parley.db"),
      PORT: String(port),
      API_TOKENS: `ci:${CI_SECRET}`,
      LOG_LEVEL: "warn",
    },
    port,
    join(dir, "bot.log"),
  );
});

afterEach(async () => {
  await bot.kill();
  await receiver.stop();
  await slack.close();
  await anthropic.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("API asks across restarts of Parley and of the callback receiver", () => {
  it("the ask survives a SIGKILL between create and answer; the long-poll and the callback deliver after it, once", async () => {
    await bot.start();
    const api = new ApiClient(`http://127.0.0.1:${port}`);
    const created = await api.create({
      channel: `slack:${CHANNEL}`,
      ask: { type: "confirm", question: "Promote build 812?" },
      callback_url: `http://127.0.0.1:${receiver.port}/hook`,
    });
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    let card: { ts: string; thread: string; blocks: unknown } | undefined;
    await waitFor(() => {
      const call = slack.callsOf("chat.postMessage").find((entry) => JSON.stringify(entry.params.blocks ?? "").includes(`ask:${id}:`));
      if (call) card = { ts: String(call.result.ts), thread: String(call.params.thread_ts), blocks: call.params.blocks };
      return card !== undefined;
    }, "the card");

    // A long-poll is cut by the crash; the caller asks again after the restart.
    const cut = api.get(id, 30).catch(() => "cut");
    await bot.kill();
    expect(await cut).toBe("cut");
    await bot.start();
    expect((await api.get(id)).body.status).toBe("pending");

    const poll = api.get(id, 30);
    const sender = new SlackRequestSender(`http://127.0.0.1:${port}`);
    await tapCard(sender, { card: card!, thread: card!.thread, user: ALICE, button: "Yes", responseUrl: `${slack.url}/respond/x` });
    const answered = await poll;
    expect(answered.body).toMatchObject({ id, status: "answered", result: { ok: true, value: true }, answered_by: `slack:${ALICE}` });

    // The receiver is down when the ask ends, then refuses once, then accepts: delivered once it does, and only then.
    await receiver.start();
    await waitFor(() => receiver.deliveries.length >= 1, "a refused delivery", 20_000);
    await receiver.stop();
    await bot.kill();
    await bot.start();
    receiver.answer = 200;
    await receiver.start();
    await waitFor(() => receiver.deliveries.some((delivery) => delivery.status === 200), "the accepted delivery", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect(receiver.deliveries.filter((delivery) => delivery.status === 200)).toHaveLength(1);

    const accepted = receiver.deliveries.find((delivery) => delivery.status === 200)!;
    expect(JSON.parse(accepted.body)).toEqual(answered.body);
    expect(verify(CI_SECRET, accepted.timestamp, accepted.body, accepted.signature)).toBe(true);
    expect(verify(CI_SECRET, accepted.timestamp, accepted.body.replace("true", "false"), accepted.signature)).toBe(false);
    expect(verify("another-secret-000000", accepted.timestamp, accepted.body, accepted.signature)).toBe(false);
  }, 120_000);
});
