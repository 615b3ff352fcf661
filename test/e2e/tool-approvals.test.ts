import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import { SILENT_LOGGER } from "../../src/ports/logger.js";
import type { ToolResultBlock } from "../../src/ports/model-client.js";
import { parsePolicyRules } from "../../src/tools/tool-policy.js";
import { TOOL_POLICY_SETTING, ToolRules } from "../../src/tools/tool-rules.js";
import { FakeAnthropic, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { recordedAdminReply } from "../fakes/recording-adapter.js";
import { scratch, testServer } from "../mcp/mcp-harness.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let files: ReturnType<typeof scratch>;
let provider: McpToolProvider;
let harness: EngineHarness;
let toolRules: ToolRules;
let now: number;
/** In ADMIN_USER_IDS of the harness's engine. */
const ADMIN = { id: "U_ADMIN", name: "root" };

/** The real engine with the test MCP server as `srv`, on a SQLite file, against the fake model. */
async function open(policy = ""): Promise<void> {
  provider = new McpToolProvider({ servers: { srv: testServer({ recordFile: files.recordFile }) }, logger: SILENT_LOGGER });
  await provider.start();
  const rules = parsePolicyRules(policy);
  if (!rules.ok) throw new Error(rules.error);
  toolRules = new ToolRules(rules.rules, undefined);
  harness = new EngineHarness(fake, database.path, { toolProvider: provider, toolRules, clock: () => now });
}

/** Runs `/parley <text>` as an admin on the harness's engine, as the platforms' slash commands do. */
async function parley(text: string): Promise<string> {
  const admin = new AdminCommands({
    engine: harness.engine,
    store: harness.store,
    settings: harness.settings,
    toolRules,
    clock: () => now,
  });
  const result = await admin.run({ text, actor: ADMIN, conversation: null });
  await harness.engine.idle();
  return recordedAdminReply(result);
}

const APPROVE = { kind: "option", index: 0 } as const;
const DENY = { kind: "option", index: 1 } as const;
const offeredTools = (index: number) => ((fake.requests.at(index)?.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
/** Every tool_result a request carries for this tool_use id, wherever it sits in the history. */
const resultsFor = (toolUseId: string, index = -1) =>
  (fake.requests.at(index)?.body.messages ?? [])
    .flatMap((message) => (typeof message.content === "string" ? [] : message.content))
    .filter((block) => block.type === "tool_result" && block.tool_use_id === toolUseId);

beforeEach(async () => {
  now = Date.UTC(2026, 11, 1, 12);
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  files = scratch();
});

afterEach(async () => {
  await harness.close();
  await provider.close();
  await fake.close();
  database.cleanup();
  files.remove();
});

const resultsOf = (index = -1): ToolResultBlock[] => lastToolResults(fake.requests.at(index)) as ToolResultBlock[];
const textOf = (result: ToolResultBlock | undefined) =>
  typeof result?.content === "string"
    ? result.content
    : (result?.content.map((part) => (part.type === "text" ? part.text : "")).join("") ?? "");

describe("tools from an MCP server, with a person's approval of the exact call", () => {
  it("offers the server's tools; a read-only one runs at once, a destructive one waits for Approve and runs once", async () => {
    await open();
    fake.script(
      { content: [toolUse("srv__lookup", { key: "region" })] },
      { content: [toolUse("srv__delete_record", { id: "r1" })] },
      reply("Deleted."),
    );
    await harness.say("clean up r1");
    const offered = ((fake.requests[0]?.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["srv__lookup", "srv__delete_record", "ask_user"]));
    expect(textOf(resultsOf()[0])).toBe("value of region");

    const card = harness.lastCard();
    expect(card.spec.type).toBe("approval");
    expect(card.spec.options.map((option) => option.label)).toEqual(["Approve", "Deny"]);
    expect(card.spec.question).toContain('"id": "r1"');
    expect(files.recorded()).toEqual(expect.not.arrayContaining(["delete_record r1"]));

    const [first, second] = await Promise.all([
      harness.engine.answer(card.askId, OWNER, { kind: "option", index: 0 }),
      harness.engine.answer(card.askId, OWNER, { kind: "option", index: 0 }),
    ]);
    await harness.engine.idle();
    expect([first.kind, second.kind].sort()).toEqual(["accepted", "already-ended"]);
    expect(files.recorded().filter((line) => line === "delete_record r1")).toHaveLength(1);
    expect(textOf(resultsOf()[0])).toBe("deleted r1");
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "answered", answerText: "Approved", by: OWNER.id });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Deleted.");
  });

  it("Deny with a reason: nothing runs and the model reads who denied it and why", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "r2" })] }, reply("Understood."));
    await harness.say("delete r2");
    expect(await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "text", text: "not on a Friday" })).toEqual({
      kind: "accepted",
    });
    await harness.engine.idle();
    expect(files.recorded()).not.toContain("delete_record r2");
    expect(resultsOf()[0]).toMatchObject({ is_error: true, content: `denied by slack:${OWNER.id}: not on a Friday` });
    expect(harness.adapter.settled.at(-1)?.settlement.answerText).toBe("Denied: “not on a Friday”");
  });

  it("a reply in the thread denies, even a casual ok; only the Approve button runs the tool", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "r9" })] }, reply("Not deleted."));
    await harness.say("delete r9");
    expect(harness.lastCard().spec.type).toBe("approval");
    expect(await harness.say("ok")).toBe("answered");
    await harness.engine.idle();
    expect(files.recorded()).not.toContain("delete_record r9");
    expect(resultsOf()[0]).toMatchObject({ is_error: true, content: `denied by slack:${OWNER.id}: ok` });
  });

  it("no decision in time: the call does not run and the model reads that the approval timed out", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "r3" })] }, reply("Nobody answered."));
    await harness.say("delete r3");
    now += 25 * 60 * 60 * 1000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(files.recorded()).not.toContain("delete_record r3");
    expect(resultsOf()[0]).toMatchObject({ is_error: true, content: "approval timed out" });
  });

  it("several calls in one message: each decided on its own, run in the model's order, all results in one message", async () => {
    await open();
    fake.script(
      {
        content: [
          toolUse("srv__delete_record", { id: "a" }),
          toolUse("srv__lookup", { key: "k" }),
          toolUse("srv__delete_record", { id: "b" }),
        ],
      },
      reply("Done with both."),
    );
    await harness.say("delete a and b");
    const firstCard = harness.lastCard();
    expect(firstCard.spec.question).toContain('"id": "a"');
    await harness.engine.answer(firstCard.askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    const secondCard = harness.lastCard();
    expect(secondCard.askId).not.toBe(firstCard.askId);
    expect(secondCard.spec.question).toContain('"id": "b"');
    expect(files.recorded()).not.toContain("delete_record a");
    await harness.engine.answer(secondCard.askId, OWNER, { kind: "option", index: 1 });
    await harness.engine.idle();
    expect(files.recorded().filter((line) => line.startsWith("delete_record"))).toEqual(["delete_record a"]);
    const results = resultsOf();
    expect(results.map((result) => textOf(result))).toEqual(["deleted a", "value of k", `denied by slack:${OWNER.id}: no reason given`]);
    expect(fake.requests).toHaveLength(2);
  });

  it("an approval is bound to the exact call: arguments changed after the card never run", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "safe" })] }, reply("Refused."));
    await harness.say("delete safe");
    const card = harness.lastCard();
    // Someone rewrites the stored call between the card and the tap.
    const raw = new Database(database.path);
    raw.prepare("UPDATE messages SET content = replace(content, '\"safe\"', '\"everything\"') WHERE role = 'assistant'").run();
    raw.close();
    await harness.engine.answer(card.askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    expect(files.recorded().filter((line) => line.startsWith("delete_record"))).toEqual([]);
    expect(textOf(resultsOf()[0])).toMatch(/^refused: the approval does not match this call/);
  });

  it("a later call with the same arguments needs its own approval", async () => {
    await open();
    fake.script(
      { content: [toolUse("srv__delete_record", { id: "x" })] },
      { content: [toolUse("srv__delete_record", { id: "x" })] },
      reply("Twice asked."),
    );
    await harness.say("delete x twice");
    const first = harness.lastCard();
    await harness.engine.answer(first.askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    const second = harness.lastCard();
    expect(second.askId).not.toBe(first.askId);
    expect(files.recorded().filter((line) => line === "delete_record x")).toHaveLength(1);
  });

  it("at most once: a call a crash left started is not sent again, unless the tool is idempotent", async () => {
    await open("srv__*=auto");
    // The state a SIGKILL leaves between "started" and "finished": the message and the journal, no result.
    const conversation = { platform: "slack" as const, workspace: "T1", channel: "C1", thread: "crash" };
    const session = await harness.store.createSession({ id: "S-crash", conversation, ownerId: OWNER.id, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "go" }] }, now);
    const calls = [
      toolUse("srv__delete_record", { id: "c1" }, "toolu_crash1"),
      toolUse("srv__set_flag", { name: "f", value: true }, "toolu_crash2"),
    ];
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    await harness.store.commitStep(session.id, { messages: [{ role: "assistant", content: calls as never }], usage, now });
    for (const [toolUseId, name] of [
      ["toolu_crash1", "srv__delete_record"],
      ["toolu_crash2", "srv__set_flag"],
    ] as const)
      await harness.store.startToolCall({ sessionId: session.id, toolUseId, name, argumentsHash: "x", now });
    fake.script(reply("Checked."));
    await harness.restart();
    expect(files.recorded().filter((line) => line.startsWith("delete_record"))).toEqual([]);
    expect(files.recorded().filter((line) => line.startsWith("set_flag"))).toEqual(["set_flag f=true"]);
    const [deleted, flagged] = resultsOf();
    expect(deleted).toMatchObject({
      is_error: true,
      content: "interrupted: Parley restarted while srv__delete_record was running; it may or may not have taken effect",
    });
    expect(textOf(flagged)).toBe("flag f is true");
  });

  it("TOOL_POLICY deny: the tool is never offered to the model", async () => {
    await open("*delete*=deny");
    fake.script(reply("ok"));
    await harness.say("hello");
    const offered = ((fake.requests[0]?.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toContain("srv__lookup");
    expect(offered).not.toContain("srv__delete_record");
  });

  it("Stop during a running call cancels it on the server and ends the turn", async () => {
    await open("srv__slow=auto");
    fake.script({ content: [toolUse("srv__slow", { seconds: 20 })] });
    const started = harness.say("work slowly");
    await waitUntil(() => harness.adapter.progress.some((view) => JSON.stringify(view.text).includes("srv__slow: ")));
    const session = await harness.store.findSession({ platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" });
    expect(await harness.engine.stop(session!.id, OWNER)).toBe("stopping");
    await started;
    await harness.engine.idle();
    await waitUntil(() => files.recorded().includes("slow cancelled"));
    expect(files.recorded()).not.toContain("slow finished");
    expect(harness.adapter.messages.at(-1)?.text).toBe("⏹ Stopped.");
  });

  it("a Stop another process stored (only a flag in the database) cancels the running call here within a second", async () => {
    await open("srv__slow=auto");
    fake.script({ content: [toolUse("srv__slow", { seconds: 20 })] });
    const started = harness.say("work slowly");
    await waitUntil(() => harness.adapter.progress.some((view) => JSON.stringify(view.text).includes("srv__slow: ")));
    const session = await harness.store.findSession({ platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" });
    const stoppedAt = Date.now();
    // What engine.stop in another process does: the flag, and no abort of this process's call.
    await harness.store.requestStop(session!.id);
    await waitUntil(() => files.recorded().includes("slow cancelled"), 3000);
    expect(Date.now() - stoppedAt).toBeLessThan(2500);
    await started;
    await harness.engine.idle();
    expect(files.recorded()).not.toContain("slow finished");
    expect(harness.adapter.messages.at(-1)?.text).toBe("⏹ Stopped.");
  });

  it("Stop while an approval is pending: the card is cancelled, the tool never runs, and the model reads cancelled", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "s1" }, "toolu_stopped")] });
    await harness.say("delete s1");
    const card = harness.lastCard();
    const session = await harness.store.findSession(CONVERSATION);
    expect(await harness.engine.stop(session!.id, OWNER)).toBe("stopped");
    await harness.engine.idle();
    expect(harness.adapter.settled.find((entry) => entry.card.askId === card.askId)?.settlement.status).toBe("cancelled");
    expect((await harness.engine.answer(card.askId, OWNER, APPROVE)).kind).toBe("already-ended");
    await harness.engine.idle();
    expect(fake.requests).toHaveLength(1);

    fake.script(reply("Nothing was deleted."));
    await harness.say("what happened?");
    expect(resultsFor("toolu_stopped")).toEqual([
      { type: "tool_result", tool_use_id: "toolu_stopped", content: "cancelled", is_error: true },
    ]);
    expect(files.recorded()).not.toContain("delete_record s1");
  });

  it("an admin's /parley cancel on a pending approval: nothing runs and the model reads cancelled", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "c1" })] }, reply("Left c1 alone."));
    await harness.say("delete c1");
    const card = harness.lastCard();
    expect(await parley(`cancel ${card.askId}`)).toContain("Cancelled ask");
    expect(resultsOf()[0]).toMatchObject({ is_error: true, content: "cancelled" });
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "cancelled", by: ADMIN.id, byAdmin: true });
    expect(files.recorded()).not.toContain("delete_record c1");
    expect(harness.adapter.messages.at(-1)?.text).toBe("Left c1 alone.");
  });

  it("an admin's /parley answer <ask> approve runs the tool once, even answered twice", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "a1" })] }, reply("Deleted a1."));
    await harness.say("delete a1");
    const card = harness.lastCard();
    expect(await parley(`answer ${card.askId} approve`)).toContain(`Answered ask \`${card.askId}\` on behalf of <@${OWNER.id}>`);
    expect(await parley(`answer ${card.askId} approve`)).not.toContain("Answered ask");
    expect(files.recorded().filter((line) => line === "delete_record a1")).toHaveLength(1);
    expect(textOf(resultsOf()[0])).toBe("deleted a1");
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "answered", answerText: "Approved", byAdmin: true });
    expect(fake.requests).toHaveLength(2);
  });

  it("an approval in one session does not let another session's tool_use with the same id run", async () => {
    await open();
    fake.script({ content: [toolUse("srv__delete_record", { id: "x" }, "toolu_shared")] }, reply("Deleted x."));
    await harness.say("delete x");
    const first = harness.lastCard();
    await harness.engine.answer(first.askId, OWNER, APPROVE);
    await harness.engine.idle();
    expect(files.recorded().filter((line) => line === "delete_record x")).toHaveLength(1);

    // Another conversation's model answer reuses the id and the arguments of the call approved above.
    const other = { ...CONVERSATION, thread: "1700000000.000200" };
    fake.script({ content: [toolUse("srv__delete_record", { id: "x" }, "toolu_shared")] }, reply("Not deleted here."));
    await harness.say("delete x here too", { conversation: other });
    const second = harness.lastCard();
    expect(second.askId).not.toBe(first.askId);
    expect(second.conversation).toEqual(other);
    expect(second.spec.type).toBe("approval");
    expect(fake.requests).toHaveLength(3);
    expect(files.recorded().filter((line) => line === "delete_record x")).toHaveLength(1);

    await harness.engine.answer(second.askId, OWNER, DENY);
    await harness.engine.idle();
    expect(resultsOf()[0]).toMatchObject({
      tool_use_id: "toolu_shared",
      is_error: true,
      content: `denied by slack:${OWNER.id}: no reason given`,
    });
    expect(files.recorded().filter((line) => line === "delete_record x")).toHaveLength(1);
  });

  it("a policy set with /parley tools policy is audited and survives a restart", async () => {
    await open();
    fake.script(reply("Hello."));
    await harness.say("hello");
    expect(offeredTools(0)).toContain("srv__delete_record");
    expect(await parley("tools policy srv__delete_* deny")).toContain("now *deny*");
    const audit = harness.store.db
      .prepare("SELECT actor, action, target, outcome FROM audit WHERE action = 'admin-tools' ORDER BY id DESC LIMIT 1")
      .get();
    expect(audit).toEqual({ actor: ADMIN.id, action: "admin-tools", target: "srv__delete_*=deny", outcome: "set" });

    // The new process knows only what it finds stored, as main.ts builds its rules.
    await harness.restart({ toolRules: (stored) => new ToolRules([], stored[TOOL_POLICY_SETTING]) });
    fake.script(reply("Hello again."));
    await harness.say("hello again");
    expect(offeredTools(-1)).toContain("srv__lookup");
    expect(offeredTools(-1)).not.toContain("srv__delete_record");
  });

  it("an image from a tool reaches the model as an image block", async () => {
    await open("srv__picture=auto");
    fake.script({ content: [toolUse("srv__picture", {})] }, reply("Nice picture."));
    await harness.say("draw");
    const [result] = resultsOf();
    expect(result?.content).toEqual([
      { type: "text", text: "a picture:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: expect.any(String) } },
    ]);
  });
});

describe("a server's elicitation during a call becomes a form card in the thread", () => {
  const formCard = async () => {
    await waitUntil(() => harness.adapter.cards.some((card) => card.spec.detached === true));
    return harness.adapter.cards.find((card) => card.spec.detached === true)!;
  };

  it("the form's answer goes back to the server typed as it asked, and the turn goes on", async () => {
    await open("srv__confirm_with_form=auto");
    fake.script({ content: [toolUse("srv__confirm_with_form", {})] }, reply("Confirmed."));
    const said = harness.say("delete it, but ask first");
    const card = await formCard();
    expect(card.spec).toMatchObject({ type: "form", title: "srv asks", question: "Confirm the deletion?" });
    expect(card.spec.fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ["confirm", "toggle", true],
      ["reason", "text", false],
      ["count", "number", false],
      ["color", "text", false],
    ]);
    expect(card.spec.fields[3]?.label).toContain("one of: red, green");
    // A stranger is refused, as on any card; the owner answers, with a count typed as text.
    const values = { confirm: true, reason: "tidy up", count: "3", color: "green" };
    expect((await harness.engine.answer(card.askId, { id: "U_STRANGER" }, { kind: "form", values })).kind).toBe("not-allowed");
    expect((await harness.engine.answer(card.askId, OWNER, { kind: "form", values })).kind).toBe("accepted");
    await said;
    await harness.engine.idle();
    expect(files.recorded()).toContain("confirm_with_form accept");
    expect(JSON.parse(textOf(resultsOf()[0]))).toEqual({
      action: "accept",
      content: { confirm: true, reason: "tidy up", count: 3, color: "green" },
    });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Confirmed.");
    // The form's claim left the turn alone: it ended as any turn does, and no ask is left open.
    const session = await harness.store.findSession(card.conversation);
    expect(session?.status).toBe("idle");
    expect(await harness.store.pendingAsk(session!.id)).toBeUndefined();
  });

  it("Cancel on the form is a decline; a choice outside the server's list is a cancel", async () => {
    await open("srv__confirm_with_form=auto");
    fake.script(
      { content: [toolUse("srv__confirm_with_form", {}, "toolu_f1")] },
      { content: [toolUse("srv__confirm_with_form", {}, "toolu_f2")] },
      reply("Nothing done."),
    );
    const said = harness.say("maybe delete it");
    const first = await formCard();
    expect((await harness.engine.cancel(first.askId, OWNER)).kind).toBe("accepted");
    await waitUntil(() => files.recorded().includes("confirm_with_form decline"));
    await waitUntil(() => harness.adapter.cards.filter((card) => card.spec.detached === true).length === 2);
    const second = harness.adapter.cards.filter((card) => card.spec.detached === true)[1]!;
    const values = { confirm: true, color: "blue" };
    expect((await harness.engine.answer(second.askId, OWNER, { kind: "form", values })).kind).toBe("accepted");
    await said;
    await harness.engine.idle();
    expect(files.recorded().filter((line) => line.startsWith("confirm_with_form"))).toEqual([
      "confirm_with_form decline",
      "confirm_with_form cancel",
    ]);
    expect(harness.adapter.messages.at(-1)?.text).toBe("Nothing done.");
  });

  it("a form a crash left open is taken down at start-up, and the turn's next ask is the session's only one", async () => {
    await open("srv__*=auto");
    const conversation = { platform: "slack" as const, workspace: "T1", channel: "C1", thread: "crash-form" };
    const session = await harness.store.createSession({ id: "S-form", conversation, ownerId: OWNER.id, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "go" }] }, now);
    const form = { type: "form" as const, dialect: "typed" as const, title: "srv asks", question: "Sure?", options: [], fields: [] };
    const spec = { ...form, timeoutSeconds: 120, allowOther: false, detached: true as const };
    await harness.store.openAsk(
      session.id,
      { id: "E-orphan", toolUseId: "elicitation:E-orphan", spec, siblingResults: [], deadline: now + 120_000 },
      now,
    );
    await harness.store.setCardRef("E-orphan", "card-orphan", now + 120_000);
    fake.script({ content: [toolUse("ask_user", { type: "confirm", question: "Go on?" })] });
    await harness.restart();
    expect(await harness.store.getAsk("E-orphan")).toMatchObject({ status: "cancelled" });
    expect(harness.adapter.settled.find((entry) => entry.card.askId === "E-orphan")?.settlement.status).toBe("cancelled");
    const pending = await harness.store.pendingAsk(session.id);
    expect(pending?.spec.question).toBe("Go on?");
  });

  it("Stop during the form takes the card down and cancels the call", async () => {
    await open("srv__confirm_with_form=auto");
    fake.script({ content: [toolUse("srv__confirm_with_form", {})] });
    const said = harness.say("delete it");
    const card = await formCard();
    const session = await harness.store.findSession(card.conversation);
    expect(await harness.engine.stop(session!.id, OWNER)).toBe("stopping");
    await said;
    await harness.engine.idle();
    await waitUntil(() => harness.adapter.settled.some((entry) => entry.card.askId === card.askId));
    expect(harness.adapter.settled.find((entry) => entry.card.askId === card.askId)?.settlement.status).toBe("cancelled");
    expect((await harness.engine.answer(card.askId, OWNER, { kind: "form", values: { confirm: true } })).kind).toBe("already-ended");
    expect(files.recorded()).not.toContain("confirm_with_form accept");
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
