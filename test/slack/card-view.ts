import { parseAskSpec } from "../../src/ask/spec.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";

export const DEADLINE = Date.UTC(2026, 10, 30, 21, 0, 0);

/** A CardView for a raw ask_user input, as the engine would hand it to the adapter. */
export function cardOf(input: unknown, overrides: Partial<CardView> = {}): CardView {
  const parsed = parseAskSpec(input, 3600);
  if (!parsed.ok) throw new Error(parsed.error);
  return {
    askId: asAskId("AskId_123"),
    sessionId: asSessionId("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11"),
    conversation: { platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" },
    spec: parsed.spec,
    answerers: ["U_ALICE"],
    anyoneInThread: false,
    deadline: DEADLINE,
    cardRef: null,
    offersStop: true,
    ...overrides,
  };
}
