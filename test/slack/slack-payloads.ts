import { FAKE_TEAM_ID } from "../fakes/fake-slack-api.js";
import type { SlackRequestSender } from "../fakes/fake-slack-signer.js";

/** Payloads in the shapes Slack documents, with made-up ids. */

export const CHANNEL = "C_GENERAL";
export const DM_CHANNEL = "D_ALICE";

let tsCounter = 100;
/** A fresh Slack message timestamp. */
export function nextTs(): string {
  tsCounter++;
  return `1700000000.${String(tsCounter).padStart(6, "0")}`;
}

let triggerCounter = 0;
export function nextTrigger(): string {
  return `trigger-${++triggerCounter}`;
}

export interface MessageShape {
  user: string;
  text: string;
  channel?: string;
  ts?: string;
  threadTs?: string;
  channelType?: "channel" | "im";
  subtype?: string;
  botId?: string;
}

export function messageEvent(type: "app_mention" | "message", shape: MessageShape): Record<string, unknown> {
  const ts = shape.ts ?? nextTs();
  return {
    type,
    user: shape.user,
    text: shape.text,
    ts,
    event_ts: ts,
    channel: shape.channel ?? CHANNEL,
    team: FAKE_TEAM_ID,
    ...(type === "message" ? { channel_type: shape.channelType ?? "channel" } : {}),
    ...(shape.threadTs ? { thread_ts: shape.threadTs } : {}),
    ...(shape.subtype ? { subtype: shape.subtype } : {}),
    ...(shape.botId ? { bot_id: shape.botId } : {}),
  };
}

export interface ActionShape {
  user: string;
  actionId: string;
  channel: string;
  cardTs: string;
  threadTs: string;
  responseUrl: string;
  type?: string;
  value?: string;
  selectedOption?: string;
  selectedOptions?: string[];
  /** Ticked boxes kept in the message's state, keyed by action id. */
  state?: Record<string, string[]>;
}

export function blockActions(shape: ActionShape): Record<string, unknown> {
  const action: Record<string, unknown> = {
    action_id: shape.actionId,
    block_id: "blk",
    type: shape.type ?? "button",
    action_ts: "1700000001.000000",
    ...(shape.value !== undefined ? { value: shape.value } : {}),
    ...(shape.selectedOption !== undefined
      ? { selected_option: { text: { type: "plain_text", text: "x" }, value: shape.selectedOption } }
      : {}),
    ...(shape.selectedOptions !== undefined ? { selected_options: shape.selectedOptions.map((value) => ({ value })) } : {}),
  };
  const values = Object.fromEntries(
    Object.entries(shape.state ?? {}).map(([actionId, picked]) => [
      "picker",
      { [actionId]: { type: "checkboxes", selected_options: picked.map((value) => ({ value })) } },
    ]),
  );
  return {
    type: "block_actions",
    user: { id: shape.user, username: shape.user.toLowerCase(), team_id: FAKE_TEAM_ID },
    api_app_id: "A_PARLEY",
    token: "unused-verification-token",
    container: { type: "message", message_ts: shape.cardTs, channel_id: shape.channel, is_ephemeral: false },
    trigger_id: nextTrigger(),
    team: { id: FAKE_TEAM_ID, domain: "parley" },
    channel: { id: shape.channel, name: "general" },
    message: { type: "message", ts: shape.cardTs, thread_ts: shape.threadTs, text: "card" },
    state: { values },
    response_url: shape.responseUrl,
    actions: [action],
  };
}

/** One control of a card's `actions` blocks: its label (buttons have one) and its action id. */
export interface CardControl {
  label: string | undefined;
  actionId: string;
}

/** The controls of a card's `actions` blocks, in the order Slack shows them. */
export function cardControls(blocks: unknown): CardControl[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block: { type?: string; elements?: Array<{ action_id?: string; text?: { text?: string } }> }) =>
    block.type === "actions"
      ? (block.elements ?? []).map((element) => ({ label: element.text?.text, actionId: element.action_id ?? "" }))
      : [],
  );
}

/** A tap on one button of a posted card, as `cardTap` and `tapCard` take it. */
export interface CardTapShape {
  /** The card's message ts and its blocks as posted (a `PostedCard` fits). */
  card: { ts: string; blocks: unknown };
  /** The thread the card was posted in. */
  thread: string;
  /** The button: its label ("Yes"), or its place among the card's controls (0 is the first). */
  button: string | number;
  user: string;
  responseUrl: string;
  /** The card's channel; `CHANNEL` unless given. */
  channel?: string;
}

/** The `block_actions` payload of a tap on a card's button; throws when the card has no such button. */
export function cardTap(tap: CardTapShape): Record<string, unknown> {
  const controls = cardControls(tap.card.blocks);
  const control = typeof tap.button === "number" ? controls[tap.button] : controls.find((candidate) => candidate.label === tap.button);
  if (!control) {
    const labels = controls.map((candidate) => candidate.label ?? candidate.actionId).join(", ");
    throw new Error(`the card ${tap.card.ts} has no button ${JSON.stringify(tap.button)} (it has: ${labels})`);
  }
  return blockActions({
    user: tap.user,
    actionId: control.actionId,
    channel: tap.channel ?? CHANNEL,
    cardTs: tap.card.ts,
    threadTs: tap.thread,
    responseUrl: tap.responseUrl,
  });
}

/**
 * Taps a card's button as Slack would over HTTP: finds the button, builds the `block_actions` payload, signs it and
 * posts it to the bot. Resolves to the bot's response (its ack); rejects when the card has no such button.
 */
export async function tapCard(sender: SlackRequestSender, tap: CardTapShape): Promise<Response> {
  return sender.interaction(cardTap(tap));
}

/** A `view_submission` for a modal the bot opened, with what the person typed, keyed by block id. */
export function viewSubmission(
  user: string,
  view: Record<string, unknown>,
  values: Record<string, { type: string; value?: string | null; selected_options?: Array<{ value: string }> }>,
): Record<string, unknown> {
  const state = Object.fromEntries(Object.entries(values).map(([blockId, element]) => [blockId, { value: element }]));
  return {
    type: "view_submission",
    team: { id: FAKE_TEAM_ID, domain: "parley" },
    user: { id: user, username: user.toLowerCase(), team_id: FAKE_TEAM_ID },
    api_app_id: "A_PARLEY",
    token: "unused-verification-token",
    trigger_id: nextTrigger(),
    view: { id: "V_MODAL", team_id: FAKE_TEAM_ID, hash: "h1", ...view, state: { values: state } },
    response_urls: [],
  };
}

export function slashCommand(user: string, text: string, responseUrl: string): Record<string, string> {
  return {
    token: "unused-verification-token",
    team_id: FAKE_TEAM_ID,
    team_domain: "parley",
    channel_id: CHANNEL,
    channel_name: "general",
    user_id: user,
    user_name: user.toLowerCase(),
    command: "/parley",
    text,
    api_app_id: "A_PARLEY",
    response_url: responseUrl,
    trigger_id: nextTrigger(),
  };
}
