import { describe, expect, it } from "vitest";
import { actionIds, parseActionId } from "../../adapters/slack/action-ids.js";
import { readCardRef, writeCardRef } from "../../adapters/slack/card-ref.js";
import { parseBlockActions } from "../../adapters/slack/parse-interaction.js";
import { parseMessageEvent } from "../../adapters/slack/parse-message-event.js";
import { parseViewSubmission, submissionErrors } from "../../adapters/slack/parse-view-submission.js";
import { blockActions, messageEvent, viewSubmission } from "./slack-payloads.js";

const CONTEXT = { teamId: "T1", botUserId: "U_BOT" };

describe("parseMessageEvent", () => {
  it("strips the bot mention, keys the event by channel and ts, and binds the conversation to the thread", () => {
    const parsed = parseMessageEvent(
      messageEvent("app_mention", { user: "U1", text: "<@U_BOT>  deploy  <@U_BOT|parley>", ts: "1.5", channel: "C9" }),
      CONTEXT,
    );
    expect(parsed).toEqual({
      eventId: "slack:C9:1.5",
      conversation: { platform: "slack", workspace: "T1", channel: "C9", thread: "1.5" },
      userId: "U1",
      text: "deploy",
      addressedToBot: true,
      directTopLevel: false,
    });
    const reply = parseMessageEvent(
      messageEvent("message", { user: "U1", text: "yes", ts: "2.0", threadTs: "1.5", channel: "C9" }),
      CONTEXT,
    );
    expect(reply).toMatchObject({ eventId: "slack:C9:2.0", conversation: { thread: "1.5" }, addressedToBot: false });
  });

  it("reads a mention of the bot whatever its id holds: characters a pattern would misread, or a huge id", () => {
    const strange = "U.+(*?[";
    const parsed = parseMessageEvent(messageEvent("app_mention", { user: "U1", text: `<@${strange}> go <@U.+> <@${strange}|me>!` }), {
      ...CONTEXT,
      botUserId: strange,
    });
    expect(parsed).toMatchObject({ text: "go <@U.+> !", addressedToBot: true });
    // Another user whose id starts with the bot's is not the bot.
    const other = parseMessageEvent(messageEvent("message", { user: "U1", text: "<@U_BOTX> hi", threadTs: "1.5" }), CONTEXT);
    expect(other).toMatchObject({ text: "<@U_BOTX> hi", addressedToBot: false });
    const huge = "U".repeat(200_000);
    expect(
      parseMessageEvent(messageEvent("app_mention", { user: "U1", text: `<@${huge}> hi` }), { ...CONTEXT, botUserId: huge }),
    ).toMatchObject({
      text: "hi",
    });
  });

  it("gives a mention and its message twin the same event id", () => {
    const mention = parseMessageEvent(messageEvent("app_mention", { user: "U1", text: "<@U_BOT> hi", ts: "3.0" }), CONTEXT);
    const twin = parseMessageEvent(messageEvent("message", { user: "U1", text: "<@U_BOT> hi", ts: "3.0" }), CONTEXT);
    expect(twin).toEqual(mention);
  });

  it("treats a DM as addressed to the bot, and marks its top-level messages, not its thread replies", () => {
    const topLevel = parseMessageEvent(messageEvent("message", { user: "U1", text: "hello", channel: "D1", channelType: "im" }), CONTEXT);
    expect(topLevel).toMatchObject({ addressedToBot: true, directTopLevel: true });
    const inThread = parseMessageEvent(
      messageEvent("message", { user: "U1", text: "hello", channel: "D1", channelType: "im", threadTs: "1.5" }),
      CONTEXT,
    );
    expect(inThread).toMatchObject({ addressedToBot: true, directTopLevel: false });
  });

  it("ignores bots, itself, housekeeping subtypes and top-level chatter, but keeps thread broadcasts", () => {
    const ignored = [
      messageEvent("message", { user: "U2", text: "<@U_BOT> hi", botId: "B2", subtype: "bot_message" }),
      messageEvent("message", { user: "U2", text: "<@U_BOT> hi", botId: "B2" }),
      messageEvent("message", { user: "U_BOT", text: "hi", channel: "D1", channelType: "im" }),
      messageEvent("message", { user: "U1", text: "<@U_BOT> hi", subtype: "message_changed" }),
      messageEvent("message", { user: "U1", text: "<@U_BOT> hi", subtype: "channel_join" }),
      messageEvent("message", { user: "U1", text: "lunch?" }),
      { type: "message", text: "no user or ts" },
    ];
    for (const event of ignored) expect(parseMessageEvent(event, CONTEXT)).toBeUndefined();
    const broadcast = messageEvent("message", { user: "U1", text: "also", threadTs: "1.0", subtype: "thread_broadcast" });
    expect(parseMessageEvent(broadcast, CONTEXT)?.text).toBe("also");
  });

  it("reads a bot user id full of regex metacharacters as plain text: its mention is found, a look-alike is not", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the id holds "${" literally, as a hostile id would
    const botUserId = "U.*+?^${}()|[]\\/-";
    const mention = messageEvent("message", { user: "U1", text: `<@${botUserId}|parley>  plan  my trip`, ts: "4.0" });
    expect(parseMessageEvent(mention, { teamId: "T1", botUserId })).toMatchObject({ text: "plan my trip", addressedToBot: true });
    const lookAlike = messageEvent("message", { user: "U1", text: "<@UXXX> hi", threadTs: "1.0", ts: "5.0" });
    expect(parseMessageEvent(lookAlike, { teamId: "T1", botUserId: "U.*" })).toMatchObject({ text: "<@UXXX> hi", addressedToBot: false });
  });
});

describe("action ids", () => {
  it("round-trip and refuse anything else", () => {
    expect(parseActionId(actionIds.option("abc_-1", 42))).toEqual({ kind: "option", askId: "abc_-1", index: 42 });
    expect(parseActionId(actionIds.done("abc"))).toEqual({ kind: "done", askId: "abc" });
    expect(parseActionId(actionIds.stop("5f0e-11"))).toEqual({ kind: "stop", sessionId: "5f0e-11" });
    for (const junk of ["ask:abc", "ask:abc:opt:x", "ask:abc:opt:1234", "ask::cancel", "ask:a b:cancel", "other:abc:cancel", "stop:"]) {
      expect(parseActionId(junk)).toBeUndefined();
    }
  });
});

const tapBase = { user: "U1", channel: "C1", cardTs: "9.0", threadTs: "1.0", responseUrl: "http://127.0.0.1/respond/x" };

describe("parseBlockActions", () => {
  it("reads buttons, selects, Done with ticked boxes, Continue, Cancel, Open and Stop", () => {
    const read = (shape: Partial<Parameters<typeof blockActions>[0]> & { actionId: string }) =>
      parseBlockActions(blockActions({ ...tapBase, ...shape }))?.interaction;
    expect(read({ actionId: "ask:A1:opt:2" })).toEqual({ kind: "answer", askId: "A1", input: { kind: "option", index: 2 } });
    expect(read({ actionId: "ask:A1:select", selectedOption: "7" })).toEqual({
      kind: "answer",
      askId: "A1",
      input: { kind: "option", index: 7 },
    });
    expect(read({ actionId: "ask:A1:select", selectedOption: "seven" })).toBeUndefined();
    expect(read({ actionId: "ask:A1:pick", selectedOptions: ["1"] })).toEqual({ kind: "none" });
    expect(read({ actionId: "ask:A1:done", state: { "ask:A1:pick": ["0", "3"] } })).toEqual({
      kind: "answer",
      askId: "A1",
      input: { kind: "options", indexes: [0, 3] },
    });
    expect(read({ actionId: "ask:A1:done" })).toEqual({ kind: "answer", askId: "A1", input: { kind: "options", indexes: [] } });
    expect(read({ actionId: "ask:A1:continue" })).toEqual({ kind: "answer", askId: "A1", input: { kind: "acknowledge" } });
    expect(read({ actionId: "ask:A1:cancel" })).toEqual({ kind: "cancel", askId: "A1" });
    expect(read({ actionId: "ask:A1:open" })).toMatchObject({ kind: "open", askId: "A1" });
    expect(read({ actionId: "stop:S1" })).toEqual({ kind: "stop", sessionId: "S1" });
  });

  it("knows where to answer privately: the card's channel and thread", () => {
    expect(parseBlockActions(blockActions({ ...tapBase, actionId: "ask:A1:cancel" }))).toMatchObject({
      userId: "U1",
      channel: "C1",
      thread: "1.0",
    });
    expect(parseBlockActions({ type: "block_actions", actions: [] })).toBeUndefined();
  });
});

describe("parseViewSubmission", () => {
  const view = { callback_id: "parley-answer", private_metadata: JSON.stringify({ askId: "A1" }) };
  it("reads a text answer and a form", () => {
    expect(parseViewSubmission(viewSubmission("U1", view, { answer: { type: "plain_text_input", value: "hello" } }))).toMatchObject({
      askId: "A1",
      userId: "U1",
      input: { kind: "text", text: "hello" },
    });
    const form = parseViewSubmission(
      viewSubmission("U1", view, {
        "field-host": { type: "plain_text_input", value: "db" },
        "field-port": { type: "number_input", value: null },
        "field-tls": { type: "checkboxes", selected_options: [{ value: "on" }] },
      }),
    );
    expect(form?.input).toEqual({ kind: "form", values: { host: "db", port: undefined, tls: true } });
  });

  it("refuses unreadable metadata and maps field errors to block ids", () => {
    expect(parseViewSubmission(viewSubmission("U1", { private_metadata: "{not json" }, {}))).toBeUndefined();
    expect(submissionErrors({ firstBlockId: "field-host" }, "x", { port: "Port must be a number." })).toEqual({
      "field-port": "Port must be a number.",
    });
    expect(submissionErrors({ firstBlockId: "answer" }, "Type an answer.", undefined)).toEqual({ answer: "Type an answer." });
  });
});

describe("card references", () => {
  it("round-trip and refuse garbage", () => {
    expect(readCardRef(writeCardRef({ channel: "C1", ts: "1.0" }))).toEqual({ channel: "C1", ts: "1.0" });
    expect(readCardRef("card-1")).toBeUndefined();
    expect(readCardRef(null)).toBeUndefined();
  });
});
