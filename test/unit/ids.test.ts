import { describe, expect, it } from "vitest";
import type { Actor, Conversation } from "../../src/ports/conversation.js";
import { asAskId, asSessionId, parseAskId, parsePlatform, parseSessionId } from "../../src/ports/ids.js";

const ACTOR: Actor = { id: "U1" };

describe("branded ids", () => {
  it("an ask id is not a session id, and a plain string is neither: the compiler refuses both (tsc checks the expect-errors)", async () => {
    const received: string[] = [];
    const conversation: Pick<Conversation, "stop" | "cancel"> = {
      stop: async (sessionId) => {
        received.push(`stop ${sessionId}`);
        return "not-running";
      },
      cancel: async (askId) => {
        received.push(`cancel ${askId}`);
        return { kind: "unknown-ask" };
      },
    };
    const askId = asAskId("AbCdEfGhIjKl");
    const sessionId = asSessionId("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11");
    // @ts-expect-error an ask id does not pass for a session id
    await conversation.stop(askId, ACTOR);
    // @ts-expect-error a string read from a payload must be named as an id first
    await conversation.cancel("AbCdEfGhIjKl", ACTOR);
    await conversation.stop(sessionId, ACTOR);
    // At run time an id is the string it was.
    expect(received).toEqual(["stop AbCdEfGhIjKl", "cancel AbCdEfGhIjKl", "stop 0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11"]);
  });

  it("reads a typed id by its shape and a platform by name", () => {
    expect(parseAskId("aZ09_-aZ09_-")).toBe("aZ09_-aZ09_-");
    expect(parseAskId("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11")).toBeUndefined();
    expect(parseSessionId("0B8E7A7E-8F0E-4A43-9A3F-3A8D1D8F0C11")).toBe("0B8E7A7E-8F0E-4A43-9A3F-3A8D1D8F0C11");
    expect(parseSessionId("aZ09_-aZ09_-")).toBeUndefined();
    expect(["slack", "discord", "terminal", "test", "Slack"].map(parsePlatform)).toEqual([
      "slack",
      "discord",
      "terminal",
      undefined,
      undefined,
    ]);
  });
});
