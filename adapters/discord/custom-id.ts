import { type AskId, asAskId, asSessionId, type SessionId } from "../../src/ports/ids.js";

/**
 * Component custom ids carry only an ask id (or session id) and an index, never option text:
 * Discord caps them at 100 characters, and the ask itself lives in the store.
 */
export type ComponentAction =
  | { kind: "option"; askId: AskId; index: number }
  | { kind: "pick"; askId: AskId; group: number }
  | { kind: "multi"; askId: AskId; group: number }
  | { kind: "done"; askId: AskId }
  | { kind: "cancel"; askId: AskId }
  | { kind: "continue"; askId: AskId }
  | { kind: "open"; askId: AskId; part: number }
  | { kind: "other"; askId: AskId }
  /** "Show all arguments" on an approval card: `ask:<askId>:args`, answered with a private file. */
  | { kind: "arguments"; askId: AskId }
  | { kind: "stop"; sessionId: SessionId };

/** What a submitted modal was for: the free-text answer, the "Other…" text, or one part of a form. */
export type ModalTarget = { kind: "text"; askId: AskId } | { kind: "other"; askId: AskId } | { kind: "part"; askId: AskId; part: number };

const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const INDEX_PATTERN = /^\d{1,3}$/;

export function componentId(action: ComponentAction): string {
  switch (action.kind) {
    case "option":
      return `ask:${action.askId}:opt:${action.index}`;
    case "pick":
    case "multi":
      return `ask:${action.askId}:${action.kind}:${action.group}`;
    case "open":
      return action.part === 0 ? `ask:${action.askId}:open` : `ask:${action.askId}:part:${action.part}`;
    case "stop":
      return `stop:${action.sessionId}`;
    case "arguments":
      return `ask:${action.askId}:args`;
    default:
      return `ask:${action.askId}:${action.kind}`;
  }
}

export function modalId(target: ModalTarget): string {
  return target.kind === "part" ? `modal:${target.askId}:part:${target.part}` : `modal:${target.askId}:${target.kind}`;
}

/** Parses a component custom id; anything not made by `componentId` is `undefined`. */
export function parseComponentId(customId: string): ComponentAction | undefined {
  const parts = customId.split(":");
  if (parts[0] === "stop" && parts.length === 2 && ID_PATTERN.test(parts[1] ?? ""))
    return { kind: "stop", sessionId: asSessionId(parts[1]!) };
  const [prefix, rawAskId, verb, index] = parts;
  if (prefix !== "ask" || rawAskId === undefined || !ID_PATTERN.test(rawAskId) || verb === undefined) return undefined;
  const askId = asAskId(rawAskId);
  if (parts.length === 3) {
    if (verb === "done" || verb === "cancel" || verb === "continue" || verb === "other") return { kind: verb, askId };
    if (verb === "open") return { kind: "open", askId, part: 0 };
    if (verb === "args") return { kind: "arguments", askId };
    return undefined;
  }
  if (parts.length !== 4 || index === undefined || !INDEX_PATTERN.test(index)) return undefined;
  const number = Number(index);
  if (verb === "opt") return { kind: "option", askId, index: number };
  if (verb === "pick" || verb === "multi") return { kind: verb, askId, group: number };
  if (verb === "part") return { kind: "open", askId, part: number };
  return undefined;
}

export function parseModalId(customId: string): ModalTarget | undefined {
  const [prefix, rawAskId, verb, index, ...rest] = customId.split(":");
  if (prefix !== "modal" || rawAskId === undefined || !ID_PATTERN.test(rawAskId) || rest.length > 0) return undefined;
  const askId = asAskId(rawAskId);
  if ((verb === "text" || verb === "other") && index === undefined) return { kind: verb, askId };
  if (verb === "part" && index !== undefined && INDEX_PATTERN.test(index)) return { kind: "part", askId, part: Number(index) };
  return undefined;
}
