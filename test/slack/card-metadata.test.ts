import { describe, expect, it } from "vitest";
import { cardMetadata, findCardTs } from "../../adapters/slack/card-metadata.js";

const BOT = "B_PARLEY";

describe("finding a card by its metadata", () => {
  const card = { ts: "1.000002", bot_id: BOT, metadata: cardMetadata("A1") };

  it("finds this bot's card for the ask among the thread's messages", () => {
    expect(findCardTs([{ ts: "1.000001", bot_id: BOT }, card], "A1", BOT)).toBe("1.000002");
  });

  it("ignores another ask's card, another app's message with the same metadata, and unreadable entries", () => {
    expect(findCardTs([card], "A2", BOT)).toBeUndefined();
    expect(findCardTs([{ ...card, bot_id: "B_OTHER" }], "A1", BOT)).toBeUndefined();
    expect(findCardTs([{ ...card, metadata: { event_type: "other", event_payload: { ask_id: "A1" } } }], "A1", BOT)).toBeUndefined();
    expect(findCardTs([null, 3, "x", { bot_id: BOT, metadata: cardMetadata("A1") }], "A1", BOT)).toBeUndefined();
  });
});
