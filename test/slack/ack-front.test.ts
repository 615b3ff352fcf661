import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AckFront } from "../../adapters/slack/ack-front.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { blockActions } from "./slack-payloads.js";

// The main thread's listener (Bolt in the bot) is played by a plain server that records what reaches it and answers
// 202 with a body, so a test can tell its answer from one the front gave.
let inner: Server;
let front: AckFront;
let reached: Array<{ url: string; body: string }>;
let sender: SlackRequestSender;

beforeEach(async () => {
  reached = [];
  inner = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      reached.push({ url: request.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(202, { "content-type": "text/plain" }).end("from the main thread");
    });
  });
  await new Promise<void>((resolve) => inner.listen(0, "127.0.0.1", resolve));
  front = await AckFront.start({
    host: "127.0.0.1",
    port: 0,
    innerPort: (inner.address() as AddressInfo).port,
    path: "/slack/events",
    signingSecret: FAKE_SIGNING_SECRET,
    limitBytes: 64 * 1024,
    logger: SILENT_LOGGER,
  });
  sender = new SlackRequestSender(`http://127.0.0.1:${front.port}`);
});

afterEach(async () => {
  await front.close();
  inner.closeAllConnections();
  await new Promise((resolve) => inner.close(resolve));
});

const tap = () =>
  blockActions({
    user: "U_ALICE",
    actionId: "ask:A1:opt:0",
    channel: "C",
    cardTs: "1.1",
    threadTs: "1.0",
    responseUrl: "http://127.0.0.1:9/r",
  });

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the ack front", () => {
  it("acknowledges a signed tap while the main thread is blocked, and hands it on once the thread is free", async () => {
    // The clicking person is another process: this one is about to block.
    const body = new URLSearchParams({ payload: JSON.stringify(tap()) }).toString();
    const script = `
      const { createHmac } = require("node:crypto");
      const body = ${JSON.stringify(body)};
      const ts = Math.floor(Date.now() / 1000);
      const signature = "v0=" + createHmac("sha256", ${JSON.stringify(FAKE_SIGNING_SECRET)}).update("v0:" + ts + ":" + body).digest("hex");
      console.log("ready");
      setTimeout(async () => {
        const response = await fetch("http://127.0.0.1:${front.port}/slack/events", {
          method: "POST", body,
          headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-signature": signature, "x-slack-request-timestamp": String(ts) },
        });
        console.log(JSON.stringify({ status: response.status, at: Date.now() }));
      }, 300);`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    await until(() => output.includes("ready"));
    // The main thread does nothing for 1.5 s: no timer, no socket, no promise of this process runs meanwhile.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
    const unblockedAt = Date.now();
    await new Promise((resolve) => child.once("exit", resolve));
    const acked = JSON.parse(output.split("\n")[1]!) as { status: number; at: number };
    expect(acked.status).toBe(200);
    expect(acked.at).toBeLessThan(unblockedAt - 500);
    await until(() => reached.length === 1);
    expect(reached[0]!.body).toBe(body);
  });

  it("a forged or replayed tap is answered by the main thread (Bolt's 401), not acknowledged", async () => {
    const forged = await sender.interaction(tap(), { secret: "not-the-secret" });
    expect([forged.status, await forged.text()]).toEqual([202, "from the main thread"]);
    const replayed = await sender.interaction(tap(), { timestampSeconds: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect([replayed.status, await replayed.text()]).toEqual([202, "from the main thread"]);
  });

  it("an event is answered by the main thread (stored first), and other paths pass through whole", async () => {
    const event = await sender.event({ type: "app_mention", text: "hi" }, { teamId: "T", eventId: "Ev1" });
    expect([event.status, await event.text()]).toEqual([202, "from the main thread"]);
    const health = await fetch(`http://127.0.0.1:${front.port}/healthz?x=1`);
    expect([health.status, await health.text()]).toEqual([202, "from the main thread"]);
    expect(reached.map((request) => request.url)).toEqual(["/slack/events", "/healthz?x=1"]);
  });

  it("refuses a body larger than any Slack payload with 413 and passes nothing on", async () => {
    const response = await sender.send("x".repeat(64 * 1024 + 1), "application/x-www-form-urlencoded");
    expect(response.status).toBe(413);
    expect(reached).toEqual([]);
  });
});
