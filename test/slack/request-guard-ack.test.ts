import { createServer, type Server } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { guardSlackRequests } from "../../adapters/slack/request-guard.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { blockActions, slashCommand, viewSubmission } from "./slack-payloads.js";

// Bolt stands behind the guard; here a listener that never answers stands in for a Bolt busy with other work, so
// only an answer the guard gave itself can come back.
let server: Server;
let sender: SlackRequestSender;
let reachedBolt: number;

beforeEach(async () => {
  reachedBolt = 0;
  const listener = guardSlackRequests(
    () => {
      reachedBolt++;
    },
    { path: "/slack/events", limitBytes: 64 * 1024, signingSecret: FAKE_SIGNING_SECRET },
  );
  server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  sender = new SlackRequestSender(`http://127.0.0.1:${port}`);
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
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
const answered = (response: Promise<Response>) =>
  Promise.race([response.then((reply) => reply.status), new Promise((resolve) => setTimeout(() => resolve("no answer"), 300))]);

describe("acknowledging before Bolt", () => {
  it("a signed tap and a signed slash command get their empty 200 at once, and still reach Bolt", async () => {
    expect(await answered(sender.interaction(tap()))).toBe(200);
    expect(await answered(sender.command(slashCommand("U_ALICE", "sessions", "http://127.0.0.1:9/r")))).toBe(200);
    expect(reachedBolt).toBe(2);
  });

  it("a forged or replayed tap is not acknowledged: Bolt refuses it as before", async () => {
    expect(await answered(sender.interaction(tap(), { secret: "not-the-secret" }))).toBe("no answer");
    expect(await answered(sender.interaction(tap(), { timestampSeconds: Math.floor(Date.now() / 1000) - 6 * 60 }))).toBe("no answer");
    expect(reachedBolt).toBe(2);
  });

  it("a form submission waits for Bolt: its answer can carry field errors", async () => {
    const submission = viewSubmission("U_ALICE", { callback_id: "ask:A1" }, {});
    expect(await answered(sender.interaction(submission))).toBe("no answer");
    expect(reachedBolt).toBe(1);
  });
});
