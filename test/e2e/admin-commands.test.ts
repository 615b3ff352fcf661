import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import { ask, FakeAnthropic, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { recordedAdminReply } from "../fakes/recording-adapter.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;
let admin: AdminCommands;
let now: number;
const ADMIN = { id: "U_ADMIN", name: "root" };
const PLATFORM_ADMIN = { id: "U_WS_ADMIN", isAdmin: true };

function open() {
  harness = new EngineHarness(fake, database.path, { clock: () => now });
  admin = new AdminCommands({ engine: harness.engine, store: harness.store, settings: harness.settings, clock: () => now });
}

beforeEach(async () => {
  now = Date.UTC(2026, 10, 29, 12);
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  open();
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

const run = async (text: string, actor: { id: string; isAdmin?: boolean } = ADMIN) => {
  const result = await admin.run({ text, actor, conversation: null });
  await harness.engine.idle();
  return recordedAdminReply(result);
};
const other = (thread: string) => ({ ...CONVERSATION, thread });
const lastResult = () => JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content) as unknown;

describe("/parley in the core", () => {
  it("refuses a non-admin, changes nothing, and audits the refusal", async () => {
    fake.script(ask({ type: "confirm", question: "Deploy?" }));
    await harness.say("deploy");
    const askId = harness.lastCard().askId;
    expect(await run(`cancel ${askId}`, OWNER)).toContain("for admins only");
    expect((await harness.store.getAsk(askId))?.status).toBe("pending");
    const audit = harness.store.db.prepare("SELECT actor, action, outcome FROM audit ORDER BY id DESC LIMIT 1").get();
    expect(audit).toEqual({ actor: OWNER.id, action: "admin-refused", outcome: "refused" });
  });

  it("lists pending sessions, cancels one, answers another, and reads stats", async () => {
    fake.script(ask({ type: "confirm", question: "Restart the db?" }));
    await harness.say("restart");
    const first = harness.lastCard();
    fake.script(ask({ question: "Which branch?", candidates: ["main", "dev"] }));
    await harness.say("build", { conversation: other("2"), eventId: "Ev-b" });
    const second = harness.lastCard();

    const listing = await run("sessions pending");
    expect(listing).toContain("Pending sessions, newest first");
    expect(listing).toContain("Restart the db?");
    expect(listing).toContain("Which branch?");
    expect(listing).toContain(`<@${OWNER.id}>`);

    fake.script(reply("Left it running."));
    expect(await run(`cancel ${first.askId}`)).toContain("Cancelled ask");
    expect(lastResult()).toEqual({ ok: false, cancelled: true });
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "cancelled", by: ADMIN.id, byAdmin: true });

    fake.script(reply("Built dev."));
    expect(await run(`answer ${second.askId} dev`)).toContain(`Answered ask \`${second.askId}\` on behalf of <@${OWNER.id}>`);
    expect(lastResult()).toEqual({ ok: true, value: "dev" });
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "answered", answerText: "dev", byAdmin: true });

    const stats = await run("stats", PLATFORM_ADMIN);
    expect(stats).toContain("Asks: 0 pending, 1 answered, 1 cancelled, 0 expired");
    expect(stats).toContain("Sessions: 0 pending, 0 running, 2 idle, 0 failed");
    expect(stats).toMatch(/Database: \d+\.\d\d MiB/);
    expect(await run("sessions pending")).toBe("No pending sessions.");
  });

  it("an admin answer is validated like any other", async () => {
    fake.script(ask({ type: "select", question: "Tier?", options: ["free", "pro"], allow_other: false }));
    await harness.say("upgrade");
    const askId = harness.lastCard().askId;
    expect(await run(`answer ${askId} platinum`)).toContain("Not accepted: Pick one of: 1. free, 2. pro.");
    expect((await harness.store.getAsk(askId))?.status).toBe("pending");
    expect(await run("answer nope yes")).toBe("No such ask `nope`.");
  });

  it("cancelling a session ends its turn", async () => {
    fake.script(ask({ type: "confirm", question: "Go?" }));
    await harness.say("go");
    const session = await harness.store.findSession(CONVERSATION);
    expect(await run(`cancel ${session!.id}`)).toContain("its pending ask was cancelled and the turn ended");
    expect(fake.requests).toHaveLength(1);
    expect((await harness.store.getSession(session!.id))?.status).toBe("idle");
  });

  it("config changes the ask budget, the next turn obeys it, and it survives a restart", async () => {
    expect(await run("config ask-budget 0")).toContain("`ask-budget` is now 0");
    expect(await run("config ask-budget lots")).toContain("Nothing was changed");
    fake.script(reply("No questions."));
    await harness.say("hi");
    expect(fake.requests.at(-1)?.body.tools?.map((tool) => tool.name)).not.toContain("ask_user");
    await harness.close();
    open();
    const { withStoredSettings } = await import("../../src/admin/runtime-settings.js");
    harness.settings.update(withStoredSettings(harness.settings.get(), await harness.store.loadSettings()));
    expect(await run("config")).toContain("`ask-budget` = 0");
  });

  it("show lists turns, asks with outcomes and who answered, with secrets masked", async () => {
    fake.script(
      ask({ type: "form", question: "Creds", fields: [{ name: "password", label: "Password", type: "password", required: true }] }),
      reply("ok"),
    );
    await harness.say("login");
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "form", values: { password: "s3cr3t-value" } });
    await harness.engine.idle();
    const session = await harness.store.findSession(CONVERSATION);
    const shown = await run(`show ${session!.id}`);
    expect(shown).toContain("answered → Password: ••••");
    expect(shown).toContain(`by <@${OWNER.id}>`);
    expect(shown).toContain("Tokens: 200 in");
    expect(shown).not.toContain("s3cr3t-value");
    expect(await run("show missing")).toBe("No such session `missing`.");
  });

  it("retry re-runs a failed turn", async () => {
    fake.script({ status: 500 });
    await harness.say("summarise");
    const session = await harness.store.findSession(CONVERSATION);
    fake.script(reply("Summary."));
    expect(await run(`retry ${session!.id}`)).toContain("Retrying session");
    expect(harness.adapter.messages.at(-1)?.text).toBe("Summary.");
    expect(await run(`retry ${session!.id}`)).toContain("not failed");
  });

  it("purge removes only ended sessions older than the cut-off", async () => {
    fake.script(reply("done"), ask({ type: "confirm", question: "Still waiting?" }));
    await harness.say("old and done");
    await harness.say("old and waiting", { conversation: other("2"), eventId: "Ev-w" });
    now += 40 * 86_400_000;
    fake.script(reply("fresh"));
    await harness.say("new", { conversation: other("3"), eventId: "Ev-n" });
    expect(await run("purge --older-than 30")).toContain("Purged 1 ended sessions");
    expect(await harness.store.findSession(CONVERSATION)).toBeUndefined();
    expect((await harness.store.findSession(other("2")))?.status).toBe("waiting");
    expect(await harness.store.findSession(other("3"))).toBeDefined();
  });

  it("a race between an admin answer and a person's tap resumes exactly once", async () => {
    fake.script(ask({ type: "confirm", question: "Race?" }), reply("One winner."));
    await harness.say("race");
    const askId = harness.lastCard().askId;
    const [adminReply, tap] = await Promise.all([
      admin.run({ text: `answer ${askId} yes`, actor: ADMIN, conversation: null }),
      harness.engine.answer(askId, OWNER, { kind: "option", index: 1 }),
    ]);
    await harness.engine.idle();
    const adminWon = recordedAdminReply(adminReply).startsWith("Answered");
    expect(adminWon !== (tap.kind === "accepted")).toBe(true);
    expect(fake.requests).toHaveLength(2);
    expect(harness.adapter.messages.map((message) => message.text)).toEqual(["One winner."]);
  });
});
