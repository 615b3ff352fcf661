import { afterEach, describe, expect, it } from "vitest";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, BOB, CAROL_ADMIN, type PostedCard, SlackHarness, type SlackHarnessOptions, waitFor } from "./slack-harness.js";
import { messageEvent, nextTs, slashCommand } from "./slack-payloads.js";

const DAY_MS = 86_400_000;
let harness: SlackHarness;
let admin: AdminCommands;
let now: number;
let mentions = 0;

/** The real AdminCommands on the harness's engine and store, wired as the Slack adapter's `onCommand` like main.ts does. */
async function open(options: SlackHarnessOptions = {}): Promise<void> {
  now = Date.UTC(2026, 10, 29, 12);
  mentions = 0;
  harness = await new SlackHarness({ ...options, clock: () => now, onCommand: (request) => admin.run(request) }).start();
  admin = new AdminCommands({ engine: harness.engine, store: harness.store, settings: harness.settings, clock: () => now });
}

afterEach(async () => {
  await harness.close();
});

/** Types `/parley <text>` as `user`; returns the reply, which must come privately on the response_url. */
async function parley(user: string, text: string): Promise<string> {
  const before = harness.slack.responses.length;
  const response = await harness.sender.command(slashCommand(user, text, harness.responseUrl));
  expect(response.status).toBe(200);
  await waitFor(() => harness.slack.responses.length > before, `the reply to /parley ${text}`);
  await harness.engine.idle();
  const body = harness.slack.responses[before]!.body;
  expect(body.response_type).toBe("ephemeral");
  return String(body.text);
}

/** `user` mentions the bot in a new thread; the model's next turn is `turn`. Returns the thread ts. */
async function mention(user: string, turn: ReturnType<typeof reply>): Promise<string> {
  harness.anthropic.script(turn);
  const thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user, text: `<@${FAKE_BOT_USER_ID}> please help`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: `EvAdmin${++mentions}`,
  });
  await harness.settle("handleMessage", mentions);
  return thread;
}

async function cardFor(user: string, input: unknown): Promise<{ thread: string; card: PostedCard }> {
  const thread = await mention(user, ask(input));
  return { thread, card: harness.card(thread) };
}

function lastToolResult(): unknown {
  return JSON.parse(lastToolResults(harness.anthropic.requests.at(-1))[0]!.content);
}

function settledLine(card: PostedCard): string {
  return JSON.stringify(harness.updatesOf(card.ts).at(-1)?.params.blocks ?? []);
}

describe("/parley admin commands on Slack, end to end", () => {
  it("refuses a non-admin privately and changes nothing", async () => {
    await open();
    const { card } = await cardFor(ALICE, { type: "confirm", question: "Deploy to production?" });
    const updatesBefore = harness.updatesOf(card.ts).length;
    const postsBefore = harness.slack.callsOf("chat.postMessage").length;

    for (const [user, command] of [
      [ALICE, `cancel ${card.askId}`],
      [BOB, `answer ${card.askId} yes`],
      [BOB, "purge --older-than 1"],
    ] as const) {
      const refusal = await parley(user, command);
      expect(refusal).toContain("`/parley` is for admins only");
      expect(refusal).toContain("Nothing was changed.");
    }
    expect(harness.updatesOf(card.ts)).toHaveLength(updatesBefore);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
    expect(await parley(CAROL_ADMIN, "sessions pending")).toContain("Deploy to production?");
    // The replies went only to the response_url: nothing was posted in the channel, not even ephemerally.
    expect(harness.slack.callsOf("chat.postMessage")).toHaveLength(postsBefore);
    expect(harness.slack.callsOf("chat.postEphemeral")).toHaveLength(0);
  });

  it("lets a workspace admin list, cancel, answer and read stats, and audits each action", async () => {
    await open();
    const first = await cardFor(ALICE, { type: "confirm", question: "Restart the database?" });
    now += 60_000;
    const second = await cardFor(BOB, { question: "Which branch?", candidates: ["main", "dev"] });

    const listing = await parley(CAROL_ADMIN, "sessions");
    expect(listing).toContain("Pending sessions, newest first (page 1)");
    expect(listing).toContain(`“Restart the database?” (\`${first.card.askId}\``);
    expect(listing).toContain(`“Which branch?” (\`${second.card.askId}\``);
    expect(listing).toContain(`<@${ALICE}> · pending`);
    expect(listing).toContain(`<@${BOB}> · pending`);
    expect(listing.indexOf("Which branch?")).toBeLessThan(listing.indexOf("Restart the database?"));

    harness.anthropic.script(reply("Left the database running."));
    expect(await parley(CAROL_ADMIN, `cancel ${first.card.askId}`)).toBe(
      `Cancelled ask \`${first.card.askId}\`; the model was told it was cancelled.`,
    );
    expect(lastToolResult()).toEqual({ ok: false, cancelled: true });
    expect(settledLine(first.card)).toContain(`✖️ Cancelled by an admin, <@${CAROL_ADMIN}>`);
    expect(settledLine(first.card)).not.toContain("ask:");
    expect(harness.posted(first.thread).at(-1)?.params.text).toBe("Left the database running.");

    harness.anthropic.script(reply("Built dev."));
    expect(await parley(CAROL_ADMIN, `answer ${second.card.askId} dev`)).toBe(
      `Answered ask \`${second.card.askId}\` on behalf of <@${BOB}>.`,
    );
    expect(lastToolResult()).toEqual({ ok: true, value: "dev" });
    expect(settledLine(second.card)).toContain(`✅ dev — answered by an admin, <@${CAROL_ADMIN}>`);
    expect(harness.posted(second.thread).at(-1)?.params.text).toBe("Built dev.");

    const stats = await parley(CAROL_ADMIN, "stats");
    expect(stats).toContain("Sessions: 0 pending, 0 running, 2 idle, 0 failed");
    expect(stats).toContain("Asks: 0 pending, 1 answered, 1 cancelled, 0 expired");
    expect(stats).toMatch(/Database: \d+\.\d\d MiB/);
    expect(await parley(CAROL_ADMIN, "sessions pending")).toBe("No pending sessions.");

    const audit = harness.store.db.prepare("SELECT action, target, outcome FROM audit WHERE actor = ? ORDER BY id").all(CAROL_ADMIN);
    expect(audit).toEqual(
      expect.arrayContaining([
        { action: "admin-sessions", target: "waiting", outcome: "ok" },
        { action: "admin-cancel", target: first.card.askId, outcome: "accepted" },
        { action: "admin-answer", target: second.card.askId, outcome: "accepted" },
        { action: "admin-stats", target: "-", outcome: "ok" },
      ]),
    );
  });

  it("takes ADMIN_USER_IDS as admins too, and the next turn obeys a new ask budget", async () => {
    await open({ adminUserIds: [BOB] });
    expect(await parley(BOB, "config ask-budget 0")).toBe("`ask-budget` is now 0. It applies from the next step and survives restarts.");
    expect(await parley(BOB, "config ask-budget lots")).toContain("Nothing was changed.");
    expect(await parley(BOB, "config")).toContain("• `ask-budget` = 0");

    const before = harness.anthropic.requests.length;
    const thread = await mention(ALICE, reply("No questions this time."));
    expect(harness.anthropic.requests).toHaveLength(before + 1);
    const tools = (harness.anthropic.requests.at(-1)?.body.tools ?? []).map((tool) => tool.name);
    expect(tools).not.toContain("ask_user");
    expect(harness.posted(thread).at(-1)?.params.text).toBe("No questions this time.");
    expect(await parley(ALICE, "config ask-budget 5")).toContain("for admins only");
    expect(await parley(BOB, "config ask-budget")).toBe("`ask-budget` = 0");
  });

  it("purge removes only ended sessions older than the cut-off", async () => {
    await open();
    const oldDone = await mention(ALICE, reply("Done long ago."));
    const oldWaiting = await cardFor(BOB, { type: "confirm", question: "Still want this?" });
    now += 40 * DAY_MS;
    const fresh = await mention(ALICE, reply("Done two days ago."));
    now += 2 * DAY_MS;

    expect(await parley(CAROL_ADMIN, "purge --older-than 30")).toMatch(
      /^Purged 1 ended sessions older than 30 days: \d+ messages and 0 asks\. Pending and running sessions were not touched\.$/,
    );
    const remaining = await parley(CAROL_ADMIN, "sessions all");
    expect(remaining).toMatch(/^\*Sessions, newest first \(page 1\)\*\n/);
    expect(remaining).not.toContain(oldDone);
    expect(remaining).toContain(`thread ${oldWaiting.thread} · <@${BOB}> · pending · 42d old`);
    expect(remaining).toContain(`thread ${fresh} · <@${ALICE}> · idle · 2d old`);
    expect((await harness.store.getAsk(oldWaiting.card.askId))?.status).toBe("pending");
  });
});
