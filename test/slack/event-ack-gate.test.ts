import { describe, expect, it } from "vitest";
import { EventAckGate, heldEventId } from "../../adapters/slack/event-ack-gate.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the acknowledgement of an event, held until it is stored", () => {
  it("goes out when the event is released, once, and not before", () => {
    const gate = new EventAckGate(1000);
    const sent: string[] = [];
    gate.hold("Ev1", () => sent.push("Ev1"));
    expect(sent).toEqual([]);
    gate.release("Ev1");
    gate.release("Ev1");
    expect(sent).toEqual(["Ev1"]);
  });

  it("goes out after the longest hold even if the event is never released, before Slack's 3 s retry", async () => {
    const gate = new EventAckGate(30);
    const sent: string[] = [];
    gate.hold("Ev2", () => sent.push("Ev2"));
    await sleep(60);
    expect(sent).toEqual(["Ev2"]);
  });

  it("goes out at once for an event released before its acknowledgement was asked for, and on shutdown", () => {
    const gate = new EventAckGate(1000);
    const sent: string[] = [];
    gate.release("Ev3");
    gate.hold("Ev3", () => sent.push("Ev3"));
    gate.hold("Ev4", () => sent.push("Ev4"));
    gate.releaseAll();
    expect(sent).toEqual(["Ev3", "Ev4"]);
  });

  it("holds people's messages and mentions only: not the bot's own, not other events, not interactions", () => {
    const envelope = (event: Record<string, unknown>) => ({ type: "event_callback", event_id: "Ev5", event });
    expect(heldEventId(envelope({ type: "message", user: "U1" }))).toBe("Ev5");
    expect(heldEventId(envelope({ type: "app_mention", user: "U1" }))).toBe("Ev5");
    expect(heldEventId(envelope({ type: "message", bot_id: "B1" }))).toBeUndefined();
    expect(heldEventId(envelope({ type: "reaction_added" }))).toBeUndefined();
    expect(heldEventId({ type: "block_actions", user: { id: "U1" } })).toBeUndefined();
    expect(heldEventId(null)).toBeUndefined();
  });
});
