import { parseAskSpec } from "../../src/ask/spec.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";

export const DEADLINE = Date.UTC(2026, 0, 1, 12, 0, 0);

/** A CardView around a spec parsed from the model's raw input, as the engine would build it. */
export function cardFor(input: unknown, overrides: Partial<CardView> = {}): CardView {
  const parsed = parseAskSpec(input, 3600);
  if (!parsed.ok) throw new Error(parsed.error);
  return {
    askId: asAskId("AbCdEfGhIjKl"),
    sessionId: asSessionId("0b5e6c1e-8f7a-4a7e-9d57-5f1f2a3b4c5d"),
    conversation: { platform: "discord", workspace: "1", channel: "2", thread: "3" },
    spec: parsed.spec,
    answerers: ["111"],
    anyoneInThread: false,
    deadline: DEADLINE,
    cardRef: null,
    offersStop: true,
    ...overrides,
  };
}
