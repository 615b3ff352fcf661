import { ApplicationCommandOptionType } from "discord.js";
import { describe, expect, it } from "vitest";
import { AnswerDrafts } from "../../adapters/discord/answer-drafts.js";
import { parseComponentId, parseModalId } from "../../adapters/discord/custom-id.js";
import { commandLine } from "../../adapters/discord/parley-command.js";
import { actorFrom, conversationFrom } from "../../adapters/discord/parse-actor.js";
import { type MessageFacts, routeMessage } from "../../adapters/discord/parse-message.js";
import { readModalValues } from "../../adapters/discord/render-modal.js";

const BOT = "999";
const facts = (overrides: Partial<MessageFacts>): MessageFacts => ({
  id: "500",
  channelId: "20",
  guildId: "10",
  channelKind: "text",
  parentId: null,
  author: { id: "1", name: "alice", isBot: false },
  content: "hello",
  mentionsBot: false,
  repliesToBot: false,
  ...overrides,
});

describe("routeMessage", () => {
  it("a mention in a channel starts a thread whose id is the message id, without the mention in the text", () => {
    const route = routeMessage(facts({ content: `<@${BOT}> deploy please`, mentionsBot: true }), BOT);
    expect(route).toEqual({
      route: "start-thread",
      threadName: "deploy please",
      message: {
        eventId: "discord:message:500",
        author: { id: "1", name: "alice", isAdmin: false },
        text: "deploy please",
        addressedToBot: true,
        conversation: { platform: "discord", workspace: "10", channel: "20", thread: "500" },
      },
    });
  });

  it("ignores channel chatter that does not mention the bot, and every bot including itself", () => {
    expect(routeMessage(facts({}), BOT).route).toBe("ignore");
    expect(routeMessage(facts({ author: { id: "2", isBot: true }, mentionsBot: true }), BOT).route).toBe("ignore");
    expect(routeMessage(facts({ author: { id: BOT, isBot: false }, channelKind: "dm" }), BOT).route).toBe("ignore");
  });

  it("a thread message goes to the engine, addressed only when it mentions or replies to the bot", () => {
    const plain = routeMessage(facts({ channelKind: "thread", channelId: "30", parentId: "20" }), BOT);
    expect(plain).toMatchObject({
      route: "engine",
      message: { addressedToBot: false, conversation: { workspace: "10", channel: "20", thread: "30" } },
    });
    const reply = routeMessage(facts({ channelKind: "thread", channelId: "30", parentId: "20", repliesToBot: true }), BOT);
    expect(reply).toMatchObject({ route: "engine", message: { addressedToBot: true } });
  });

  it("a blank thread message (no MessageContent intent) is dropped unless addressed to the bot", () => {
    expect(routeMessage(facts({ channelKind: "thread", parentId: "20", content: "" }), BOT).route).toBe("ignore");
    expect(routeMessage(facts({ channelKind: "thread", parentId: "20", content: `<@${BOT}>`, mentionsBot: true }), BOT).route).toBe(
      "engine",
    );
  });

  it("a DM is addressed to the bot without a mention and keyed by its channel", () => {
    expect(routeMessage(facts({ channelKind: "dm", guildId: null, channelId: "77" }), BOT)).toMatchObject({
      route: "engine",
      message: { addressedToBot: true, conversation: { workspace: "dm", channel: "77", thread: "77" } },
    });
  });
});

describe("interaction facts", () => {
  it("admin comes only from Manage Server; a plain channel has no conversation", () => {
    const base = { userId: "1", name: "alice", guildId: "10", channelId: "30", channelKind: "thread" as const, parentId: "20" };
    expect(actorFrom({ ...base, hasManageGuild: true })).toEqual({ id: "1", name: "alice", isAdmin: true });
    expect(actorFrom({ ...base, hasManageGuild: false }).isAdmin).toBe(false);
    expect(conversationFrom({ ...base, hasManageGuild: false })).toEqual({
      platform: "discord",
      workspace: "10",
      channel: "20",
      thread: "30",
    });
    expect(conversationFrom({ ...base, hasManageGuild: false, channelKind: "text", parentId: null })).toBeNull();
  });
});

describe("ids, modal values and command lines", () => {
  it("rejects custom ids the bot did not make", () => {
    for (const id of ["", "ask:", "ask:x:opt:1000", "ask:x:opt:-1", "ask:a b:cancel", "ask:x:cancel:extra", "stop:", "other:x"]) {
      expect(parseComponentId(id)).toBeUndefined();
    }
    expect(parseModalId("modal:x:part:a")).toBeUndefined();
  });

  it("reads text fields, Yes/No toggles and the answer box", () => {
    expect(
      readModalValues([
        { customId: "field:host", value: "db" },
        { customId: "field:tls", values: ["yes"] },
        { customId: "field:debug", values: ["no"] },
        { customId: "field:dry", values: [] },
        { customId: "answer", value: "free text" },
      ]),
    ).toEqual({ text: "free text", values: { host: "db", tls: true, debug: false } });
  });

  it("joins subcommands and options into one line", () => {
    expect(commandLine([{ name: "command", type: ApplicationCommandOptionType.String, value: "sessions pending" }])).toBe(
      "sessions pending",
    );
    expect(
      commandLine([
        {
          name: "purge",
          type: ApplicationCommandOptionType.Subcommand,
          options: [{ name: "older-than", type: 3, value: "--older-than 30d" }],
        },
      ]),
    ).toBe("purge --older-than 30d");
  });

  it("keeps drafts per person and forgets them when the ask ends", () => {
    const drafts = new AnswerDrafts();
    drafts.mergeForm("ask1", "alice", { host: "db" });
    drafts.mergeForm("ask1", "alice", { port: "1" });
    drafts.setPicks("ask1", "alice", 1, [27]);
    drafts.setPicks("ask1", "alice", 0, [3, 1]);
    expect(drafts.formValues("ask1", "alice")).toEqual({ host: "db", port: "1" });
    expect(drafts.formValues("ask1", "bob")).toEqual({});
    expect(drafts.allPicks("ask1", "alice")).toEqual([1, 3, 27]);
    drafts.forget("ask1");
    expect(drafts.formValues("ask1", "alice")).toEqual({});
    expect(drafts.allPicks("ask1", "alice")).toEqual([]);
  });
});
