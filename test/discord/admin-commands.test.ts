import { afterEach, describe, expect, it } from "vitest";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import type { FakeUser } from "../fakes/fake-discord.js";
import { ADMIN, ALICE, BOB, DiscordHarness, type HarnessOptions } from "./discord-harness.js";

type Json = Record<string, unknown>;
const DAY_MS = 86_400_000;
let harness: DiscordHarness;
let admin: AdminCommands;

/** The real AdminCommands on the harness's engine, store and clock, wired as the adapter's `onCommand` like main.ts does. */
async function open(options: HarnessOptions = {}): Promise<void> {
  harness = new DiscordHarness({ ...options, onCommand: (request) => admin.run(request) });
  harness.now = Date.UTC(2026, 10, 29, 12);
  await harness.start();
  admin = new AdminCommands({ engine: harness.engine, store: harness.store, settings: harness.settings, clock: () => harness.now });
}

afterEach(async () => {
  await harness.close();
});

/** Runs `/parley command:<text>` as `user`; the reply must be an ephemeral interaction reply (flags 64). */
async function parley(user: FakeUser, text: string): Promise<string> {
  const interaction = harness.discord.command(user, text);
  const callback = await harness.discord.callbackOf(interaction);
  expect(callback.type).toBe(5);
  expect(Number(callback.data?.flags) & 64).toBe(64);
  const answer = await harness.until(`the reply to /parley ${text}`, () =>
    harness.discord.ephemerals.find((entry) => entry.interactionId === interaction),
  );
  expect(Number(answer.message.flags) & 64).toBe(64);
  return String(answer.message.content);
}

/** `user` mentions the bot; the model's next turn is `turn`. Returns the thread the bot opened. */
async function mention(user: FakeUser, turn: ReturnType<typeof reply>): Promise<string> {
  harness.anthropic.script(turn);
  return harness.mention(user, "please help");
}

async function cardFor(user: FakeUser, input: unknown): Promise<{ thread: string; card: Json; askId: string }> {
  const thread = await mention(user, ask(input));
  const card = await harness.card(thread);
  const askId = (await harness.store.pendingAsk((await sessionIn(thread)).id))?.id;
  if (!askId) throw new Error(`no pending ask in thread ${thread}`);
  return { thread, card, askId };
}

async function sessionIn(thread: string) {
  const session = (await harness.store.listSessions({ limit: 100, offset: 0 })).find((found) => found.conversation.thread === thread);
  if (!session) throw new Error(`no session in thread ${thread}`);
  return session;
}

function lastToolResult(): unknown {
  return JSON.parse(lastToolResults(harness.anthropic.requests.at(-1))[0]!.content);
}

function contentOf(message: Json): string {
  return String(harness.discord.message(String(message.id))?.content);
}

describe("/parley admin commands on Discord, end to end", () => {
  it("refuses a member without Manage Server privately and changes nothing", async () => {
    await open();
    const { thread, card, askId } = await cardFor(ALICE, { type: "confirm", question: "Deploy to production?" });
    const cardBefore = JSON.stringify(harness.discord.message(String(card.id)));
    const messagesBefore = harness.discord.messagesIn(thread).length;

    for (const [user, command] of [
      [ALICE, `cancel ${askId}`],
      [BOB, `answer ${askId} yes`],
      [BOB, "purge --older-than 1"],
    ] as const) {
      expect(await parley(user, command)).toBe("🔒 /parley is for admins: it needs the Manage Server permission.");
    }
    expect(JSON.stringify(harness.discord.message(String(card.id)))).toBe(cardBefore);
    expect(harness.discord.messagesIn(thread)).toHaveLength(messagesBefore);
    expect(harness.discord.messagesIn(harness.discord.channelId).filter((message) => String(message.content).includes("admins"))).toEqual(
      [],
    );
    expect(harness.anthropic.requests).toHaveLength(1);
    expect((await harness.store.getAsk(askId))?.status).toBe("pending");
    expect(await parley(ADMIN, "sessions pending")).toContain("Deploy to production?");
  });

  it("lets a Manage Server member list, cancel, answer and read stats, and audits each action", async () => {
    await open();
    const first = await cardFor(ALICE, { type: "confirm", question: "Restart the database?" });
    harness.now += 60_000;
    const second = await cardFor(BOB, { question: "Which branch?", candidates: ["main", "dev"] });

    const listing = await parley(ADMIN, "sessions");
    expect(listing).toContain("Pending sessions, newest first (page 1)");
    expect(listing).toContain(`<#${first.thread}> · <@${ALICE.id}> · pending`);
    expect(listing).toContain(`<#${second.thread}> · <@${BOB.id}> · pending`);
    expect(listing).toContain(`“Restart the database?” (\`${first.askId}\``);
    expect(listing).toContain(`“Which branch?” (\`${second.askId}\``);
    expect(listing.indexOf("Which branch?")).toBeLessThan(listing.indexOf("Restart the database?"));

    harness.anthropic.script(reply("Left the database running."));
    expect(await parley(ADMIN, `cancel ${first.askId}`)).toBe(`Cancelled ask \`${first.askId}\`; the model was told it was cancelled.`);
    await harness.botSays(first.thread, /Left the database running\./);
    expect(lastToolResult()).toEqual({ ok: false, cancelled: true });
    expect(contentOf(first.card)).toContain(`🚫 Cancelled by an admin, <@${ADMIN.id}>`);
    expect(harness.discord.message(String(first.card.id))?.components).toEqual([]);

    harness.anthropic.script(reply("Built dev."));
    expect(await parley(ADMIN, `answer ${second.askId} dev`)).toBe(`Answered ask \`${second.askId}\` on behalf of <@${BOB.id}>.`);
    await harness.botSays(second.thread, /Built dev\./);
    expect(lastToolResult()).toEqual({ ok: true, value: "dev" });
    expect(contentOf(second.card)).toContain(`✅ dev — answered by an admin, <@${ADMIN.id}>`);

    const stats = await parley(ADMIN, "stats");
    expect(stats).toContain("Sessions: 0 pending, 0 running, 2 idle, 0 failed");
    expect(stats).toContain("Asks: 0 pending, 1 answered, 1 cancelled, 0 expired");
    expect(stats).toMatch(/Database: \d+\.\d\d MiB/);
    expect(await parley(ADMIN, "sessions pending")).toBe("No pending sessions.");

    const audit = harness.store.db.prepare("SELECT action, target, outcome FROM audit WHERE actor = ? ORDER BY id").all(ADMIN.id);
    expect(audit).toEqual(
      expect.arrayContaining([
        { action: "admin-sessions", target: "waiting", outcome: "ok" },
        { action: "admin-cancel", target: first.askId, outcome: "accepted" },
        { action: "admin-answer", target: second.askId, outcome: "accepted" },
        { action: "admin-stats", target: "-", outcome: "ok" },
      ]),
    );
  });

  it("takes ADMIN_USER_IDS as admins too, and the next turn obeys a new ask budget", async () => {
    await open({ adminUserIds: [BOB.id] });
    expect(await parley(BOB, "config ask-budget 0")).toBe("`ask-budget` is now 0. It applies from the next step and survives restarts.");
    expect(await parley(BOB, "config ask-budget lots")).toContain("Nothing was changed.");
    expect(await parley(BOB, "config")).toContain("• `ask-budget` = 0");

    const before = harness.anthropic.requests.length;
    const thread = await mention(ALICE, reply("No questions this time."));
    await harness.botSays(thread, /No questions this time\./);
    expect(harness.anthropic.requests).toHaveLength(before + 1);
    const tools = (harness.anthropic.requests.at(-1)?.body.tools ?? []).map((tool) => tool.name);
    expect(tools).not.toContain("ask_user");
    expect(await parley(ALICE, "config ask-budget 5")).toContain("Manage Server");
    expect(await parley(BOB, "config ask-budget")).toBe("`ask-budget` = 0");
  });

  it("purge removes only ended sessions older than the cut-off", async () => {
    await open();
    const oldDone = await mention(ALICE, reply("Done long ago."));
    await harness.botSays(oldDone, /Done long ago\./);
    const oldWaiting = await cardFor(BOB, { type: "confirm", question: "Still want this?" });
    harness.now += 40 * DAY_MS;
    const fresh = await mention(ALICE, reply("Done two days ago."));
    await harness.botSays(fresh, /Done two days ago\./);
    harness.now += 2 * DAY_MS;

    expect(await parley(ADMIN, "purge --older-than 30")).toMatch(
      /^Purged 1 ended sessions older than 30 days: \d+ messages and 0 asks\. Pending and running sessions were not touched\.$/,
    );
    const remaining = await parley(ADMIN, "sessions all");
    expect(remaining).toMatch(/^\*\*Sessions, newest first \(page 1\)\*\*\n/);
    expect(remaining).not.toContain(oldDone);
    expect(remaining).toContain(`<#${oldWaiting.thread}> · <@${BOB.id}> · pending · 42d old`);
    expect(remaining).toContain(`<#${fresh}> · <@${ALICE.id}> · idle · 2d old`);
    expect((await harness.store.getAsk(oldWaiting.askId))?.status).toBe("pending");
  });
});
