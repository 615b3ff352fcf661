import { describe, expect, it } from "vitest";
import { ANSWER_CLOCK_MARGIN_MS, cardNonce, findCardMessageId, textsSince } from "../../adapters/discord/card-lookup.js";

const BOT = "100";
const row = (...ids: string[]) => ({ type: 1, components: ids.map((custom_id) => ({ type: 2, custom_id })) });

describe("Discord card lookup", () => {
  it("derives a nonce of at most 25 characters, stable per ask and different between asks", () => {
    const id = "6f1c2c1e-8c1a-4a57-9a51-2b1b1f0e9c11";
    expect(cardNonce(id)).toHaveLength(25);
    expect(cardNonce(id)).toBe(cardNonce(id));
    expect(cardNonce(id)).not.toBe(cardNonce(`${id}x`));
  });

  it("finds this bot's message carrying the ask's components, and nothing else", () => {
    const messages = [
      { id: "3", author: { id: BOT }, components: [row("stop:S1")] },
      { id: "2", author: { id: "999" }, components: [row("ask:A1:opt:0")] },
      { id: "1", author: { id: BOT }, components: [row("ask:A1:opt:0", "ask:A1:cancel")] },
    ];
    expect(findCardMessageId(messages, "A1", BOT)).toBe("1");
    expect(findCardMessageId(messages, "A", BOT)).toBeUndefined();
    expect(findCardMessageId([null, "x", { id: 4 }], "A1", BOT)).toBeUndefined();
  });

  it("counts this bot's texts posted or edited since an answer was written, less the clock margin", () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const written = Date.parse("2026-12-03T12:00:00Z");
    const messages = [
      // A status line edited into the answer: posted long before, edited after.
      { id: "5", author: { id: BOT }, content: "Shipped.", timestamp: at(written - 3_600_000), edited_timestamp: at(written + 50) },
      { id: "4", author: { id: BOT }, content: "Part two", timestamp: at(written - ANSWER_CLOCK_MARGIN_MS + 1), edited_timestamp: null },
      { id: "3", author: { id: "999" }, content: "Shipped.", timestamp: at(written + 10), edited_timestamp: null },
      // The same words as an earlier turn's answer, from before the margin: not this answer.
      { id: "2", author: { id: BOT }, content: "Part two", timestamp: at(written - ANSWER_CLOCK_MARGIN_MS - 1), edited_timestamp: null },
      { id: "1", author: { id: BOT }, content: "Shipped.", timestamp: at(written - 10 * ANSWER_CLOCK_MARGIN_MS), edited_timestamp: null },
    ];
    expect(textsSince(messages, BOT, written)).toEqual(
      new Map([
        ["Shipped.", 1],
        ["Part two", 1],
      ]),
    );
    expect(textsSince([null, { author: { id: BOT } }], BOT, written)).toEqual(new Map());
  });
});
