import { type AskId, asAskId, asSessionId, type SessionId } from "../../src/ports/ids.js";

/**
 * Component ids carry only the ask id (or session id) and an option index, never a value or a secret.
 * `ask:<askId>:opt:<i>` a button; `ask:<askId>:select` a radio or select whose option value is the index;
 * `ask:<askId>:pick` a checkbox or multi-select change (read on Done); `ask:<askId>:done|cancel|open|continue`;
 * `ask:<askId>:args` "Show all arguments" on an approval card (opens a read-only modal, answers nothing);
 * `stop:<sessionId>` the Stop button on a progress message.
 */
export type ActionId =
  | { kind: "option"; askId: AskId; index: number }
  | { kind: "select"; askId: AskId }
  | { kind: "pick"; askId: AskId }
  | { kind: "done"; askId: AskId }
  | { kind: "cancel"; askId: AskId }
  | { kind: "open"; askId: AskId }
  | { kind: "continue"; askId: AskId }
  | { kind: "arguments"; askId: AskId }
  | { kind: "stop"; sessionId: SessionId };

const ID = "[A-Za-z0-9_-]{1,100}";
const ASK_ACTION = new RegExp(`^ask:(${ID}):(select|pick|done|cancel|open|continue|args|opt:(\\d{1,3}))$`);
const STOP_ACTION = new RegExp(`^stop:(${ID})$`);

export const actionIds = {
  option: (askId: string, index: number) => `ask:${askId}:opt:${index}`,
  select: (askId: string) => `ask:${askId}:select`,
  pick: (askId: string) => `ask:${askId}:pick`,
  done: (askId: string) => `ask:${askId}:done`,
  cancel: (askId: string) => `ask:${askId}:cancel`,
  open: (askId: string) => `ask:${askId}:open`,
  continue: (askId: string) => `ask:${askId}:continue`,
  arguments: (askId: string) => `ask:${askId}:args`,
  stop: (sessionId: string) => `stop:${sessionId}`,
};

/** Every action id Parley draws matches this, so one Bolt listener receives them all. */
export const PARLEY_ACTION_PATTERN = /^(ask|stop):/;

export function parseActionId(actionId: string): ActionId | undefined {
  const stop = STOP_ACTION.exec(actionId);
  if (stop?.[1]) return { kind: "stop", sessionId: asSessionId(stop[1]) };
  const match = ASK_ACTION.exec(actionId);
  const verb = match?.[2];
  if (!match?.[1] || !verb) return undefined;
  const askId = asAskId(match[1]);
  if (match[3] !== undefined) return { kind: "option", askId, index: Number(match[3]) };
  if (verb === "select" || verb === "pick" || verb === "done" || verb === "cancel" || verb === "open" || verb === "continue") {
    return { kind: verb, askId };
  }
  if (verb === "args") return { kind: "arguments", askId };
  return undefined;
}

/** An option's value in radios, selects and checkboxes: its index, parsed back strictly. */
export function parseOptionIndex(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,3}$/.test(value)) return undefined;
  return Number(value);
}
