import type { types } from "@slack/bolt";
import { APPROVE_LABEL, CARD_ARGUMENT_CHARS, DENY_LABEL } from "../../src/ask/approval.js";
import type { AskOption, AskSpec } from "../../src/ask/spec.js";
import { actionIds } from "./action-ids.js";
import { CHOICE_LIMITS, SLACK_LIMITS } from "./slack-limits.js";
import { mrkdwnText, plainText } from "./slack-text.js";

type Block = types.KnownBlock;
type ActionsElement = types.ActionsBlockElement;

export const DENY_WITH_REASON_LABEL = "Deny with reason…";
export const SHOW_ARGUMENTS_LABEL = "Show all arguments";

/** True when an approval card shows its arguments cut, so a button must offer them whole. */
export function argumentsCut(spec: AskSpec): boolean {
  return spec.approval !== undefined && spec.approval.argumentsText.length > CARD_ARGUMENT_CHARS;
}

function button(text: string, actionId: string, style?: "primary" | "danger"): types.Button {
  return { type: "button", text: plainText(text, SLACK_LIMITS.buttonTextChars), action_id: actionId, ...(style ? { style } : {}) };
}

function option(entry: AskOption, index: number): types.PlainTextOption {
  return { text: plainText(entry.label, SLACK_LIMITS.optionTextChars), value: String(index) };
}

function cancelButton(askId: string): types.Button {
  return button("Cancel", actionIds.cancel(askId));
}

const STOP_LABEL = "Stop";

/** Stop on a waiting card ends the whole turn, not just the question: asked once more, since Cancel sits beside it. */
function stopButton(sessionId: string): types.Button {
  return {
    ...button(STOP_LABEL, actionIds.stop(sessionId)),
    confirm: {
      title: plainText("Stop the agent?", SLACK_LIMITS.confirmTitleChars),
      text: plainText("This cancels the question and ends the turn. Write again to continue.", SLACK_LIMITS.confirmTextChars),
      confirm: plainText("Stop", SLACK_LIMITS.confirmButtonChars),
      deny: plainText("Keep waiting", SLACK_LIMITS.confirmButtonChars),
      style: "danger",
    },
  };
}

/** A choice of one: buttons, then radio buttons, then a static select, as the option count grows. */
function choiceElements(askId: string, spec: AskSpec): ActionsElement[] {
  const options = spec.options.slice(0, CHOICE_LIMITS.staticSelect);
  if (options.length <= CHOICE_LIMITS.buttons) {
    return options.map((entry, index) =>
      button(entry.label, actionIds.option(askId, index), spec.default === entry.value ? "primary" : undefined),
    );
  }
  const choices = options.map(option);
  if (options.length <= CHOICE_LIMITS.radioButtons) {
    return [{ type: "radio_buttons", action_id: actionIds.select(askId), options: choices }];
  }
  return [
    {
      type: "static_select",
      action_id: actionIds.select(askId),
      placeholder: plainText("Choose…", SLACK_LIMITS.placeholderChars),
      options: choices,
    },
  ];
}

/** A choice of any: checkboxes up to ten, then a multi-select; the answer is read when Done is tapped. */
function multiselectElements(askId: string, spec: AskSpec): ActionsElement[] {
  const options = spec.options.slice(0, CHOICE_LIMITS.staticSelect).map(option);
  const picker: ActionsElement =
    options.length <= CHOICE_LIMITS.checkboxes
      ? { type: "checkboxes", action_id: actionIds.pick(askId), options }
      : {
          type: "multi_static_select",
          action_id: actionIds.pick(askId),
          placeholder: plainText("Choose any…", SLACK_LIMITS.placeholderChars),
          options,
        };
  return [picker, button("Done", actionIds.done(askId), "primary")];
}

/**
 * The interactive part of a card: one actions block (Cancel, then Stop when `stopSessionId` names the turn that
 * waits on it) plus an optional hint line.
 */
export function renderControls(askId: string, spec: AskSpec, stopSessionId?: string): Block[] {
  const stop = stopSessionId === undefined ? [] : [stopButton(stopSessionId)];
  let elements: ActionsElement[];
  let hint: string | undefined;
  switch (spec.type) {
    case "confirm":
      elements = [button("Yes", actionIds.option(askId, 0), "primary"), button("No", actionIds.option(askId, 1), "danger")];
      hint = "Or reply *yes* or *no* in this thread.";
      break;
    case "select":
    case "buttons":
      elements = choiceElements(askId, spec);
      if (spec.allowOther) hint = "None of these? Reply in this thread with your own answer.";
      break;
    case "multiselect":
      elements = multiselectElements(askId, spec);
      hint = "Tick any, then tap *Done*. Ticking none is an answer too.";
      break;
    case "input":
      elements = [button("Answer", actionIds.open(askId), "primary")];
      hint = "Or reply in this thread.";
      break;
    case "form":
      elements = [button("Fill in", actionIds.open(askId), "primary")];
      break;
    case "message":
      elements = [button("Continue", actionIds.continue(askId), "primary")];
      break;
    case "approval":
      // Exactly Approve and Deny (DESIGN §11), then a way to deny with a reason in a form, and the arguments whole
      // when the card had to cut them: nobody should approve what they could not read.
      elements = [
        button(APPROVE_LABEL, actionIds.option(askId, 0), "primary"),
        button(DENY_LABEL, actionIds.option(askId, 1), "danger"),
        button(DENY_WITH_REASON_LABEL, actionIds.open(askId)),
        ...(argumentsCut(spec) ? [button(SHOW_ARGUMENTS_LABEL, actionIds.arguments(askId))] : []),
        ...stop,
      ];
      hint = "Or reply in this thread with your reason to deny.";
      return [
        { type: "actions", elements },
        { type: "context", elements: [mrkdwnText(hint)] },
      ];
  }
  const blocks: Block[] = [{ type: "actions", elements: [...elements, cancelButton(askId), ...stop] }];
  if (hint) blocks.push({ type: "context", elements: [mrkdwnText(hint)] });
  return blocks;
}
