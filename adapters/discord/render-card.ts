import {
  ActionRowBuilder,
  type APIActionRowComponent,
  type APIComponentInMessageActionRow,
  ButtonBuilder,
  ButtonStyle,
  StringSelectMenuBuilder,
} from "discord.js";
import { APPROVE_LABEL, CARD_ARGUMENT_CHARS, DENY_LABEL } from "../../src/ask/approval.js";
import type { AskOption, AskSpec } from "../../src/ask/spec.js";
import type { AskId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { checkMessagePayload } from "./check-payload.js";
import { componentId } from "./custom-id.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";
import { formParts } from "./render-modal.js";

/** A message body ready for `POST /channels/:id/messages` or `PATCH …/messages/:id`. */
export interface DiscordMessageBody {
  content: string;
  components: APIActionRowComponent<APIComponentInMessageActionRow>[];
  allowed_mentions: { parse: []; users?: string[] };
}

type Row = ActionRowBuilder<ButtonBuilder> | ActionRowBuilder<StringSelectMenuBuilder>;

/** Up to 20 options are shown as buttons (4 rows of 5); the fifth row keeps Other…, Cancel and Stop. */
const MAX_OPTION_BUTTONS = (DISCORD_LIMITS.actionRows - 1) * DISCORD_LIMITS.buttonsPerRow;
/** A `select` with more options than this becomes select menus, as platforms.md §3.2 suggests. */
const SELECT_AS_BUTTONS_UP_TO = 5;
const MAX_SELECTS = DISCORD_LIMITS.actionRows - 1;

export const DENY_WITH_REASON_LABEL = "Deny with reason…";
export const SHOW_ARGUMENTS_LABEL = "Show all arguments";

/** True when an approval card shows its arguments cut, so a button must offer them whole. */
export function argumentsCut(spec: AskSpec): boolean {
  return spec.approval !== undefined && spec.approval.argumentsText.length > CARD_ARGUMENT_CHARS;
}

export interface CardOptions {
  /** False without the Message Content intent: plain thread replies arrive blank, so the card must not offer them. */
  plainReplies: boolean;
}

/** Draws an ask as a message: question, who may answer, expiry, and components within Discord's limits. */
export function renderCard(card: CardView, options: CardOptions = { plainReplies: true }): DiscordMessageBody {
  const { spec, askId } = card;
  // Without Message Content, Discord still shows the bot a Reply to its own message and a mention of it.
  const reply = options.plainReplies ? "reply in this thread" : "use Reply on this card (or mention the bot)";
  const rows: Row[] = [];
  const hints: string[] = [];
  const lastRow = new ActionRowBuilder<ButtonBuilder>();
  const button = (label: string, action: Parameters<typeof componentId>[0], style = ButtonStyle.Primary) =>
    new ButtonBuilder().setCustomId(componentId(action)).setLabel(truncate(label, DISCORD_LIMITS.buttonLabelChars)).setStyle(style);

  switch (spec.type) {
    case "confirm":
      lastRow.addComponents(
        button("Yes", { kind: "option", askId, index: 0 }, ButtonStyle.Success),
        button("No", { kind: "option", askId, index: 1 }, ButtonStyle.Danger),
      );
      break;
    case "select":
    case "buttons": {
      const asButtons = spec.options.length <= (spec.type === "buttons" ? MAX_OPTION_BUTTONS : SELECT_AS_BUTTONS_UP_TO);
      rows.push(...(asButtons ? optionButtons(spec, askId) : optionSelects(spec, askId, "pick")));
      if (spec.options.some((option) => option.label.length > DISCORD_LIMITS.buttonLabelChars)) hints.push(numberedList(spec.options));
      if (spec.allowOther) {
        lastRow.addComponents(button("Other…", { kind: "other", askId }, ButtonStyle.Secondary));
        hints.push(`Or ${reply} with your own answer.`);
      }
      break;
    }
    case "multiselect":
      rows.push(...optionSelects(spec, askId, "multi"));
      lastRow.addComponents(button("Done", { kind: "done", askId }, ButtonStyle.Success));
      hints.push("Pick any number, then press Done.");
      break;
    case "input":
      lastRow.addComponents(button("Answer", { kind: "open", askId, part: 0 }));
      hints.push(`Press Answer, or ${reply}.`);
      break;
    case "form": {
      const parts = formParts(spec).length;
      lastRow.addComponents(button("Fill in", { kind: "open", askId, part: 0 }));
      if (spec.fields.some((field) => field.type === "password"))
        hints.push("⚠️ Discord does not mask passwords: what you type is visible.");
      if (parts > 1) hints.push(`The form opens in ${parts} parts.`);
      hints.push(`Fields: ${spec.fields.map((field) => `${field.label}${field.required ? "*" : ""}`).join(", ")}.`);
      break;
    }
    case "message":
      lastRow.addComponents(button("Continue", { kind: "continue", askId }));
      break;
    case "approval":
      // Exactly Approve and Deny (DESIGN §11), then a way to deny with a reason in a form; no Cancel.
      lastRow.addComponents(
        button(APPROVE_LABEL, { kind: "option", askId, index: 0 }, ButtonStyle.Success),
        button(DENY_LABEL, { kind: "option", askId, index: 1 }, ButtonStyle.Danger),
        button(DENY_WITH_REASON_LABEL, { kind: "open", askId, part: 0 }, ButtonStyle.Secondary),
      );
      // Nobody should approve what they could not read: arguments the card cut are offered whole.
      if (argumentsCut(spec)) lastRow.addComponents(button(SHOW_ARGUMENTS_LABEL, { kind: "arguments", askId }, ButtonStyle.Secondary));
      hints.push(`Or ${reply} with your reason to deny.`);
      break;
  }
  if (spec.type !== "approval") lastRow.addComponents(button("Cancel", { kind: "cancel", askId }, ButtonStyle.Secondary));
  // Ends the turn waiting on the card, not just the question; grey, as a red one would read as No on a confirm.
  if (card.offersStop) lastRow.addComponents(button("Stop", { kind: "stop", sessionId: card.sessionId }, ButtonStyle.Secondary));
  rows.push(lastRow);

  const footer = `-# ${whoMayAnswer(card)} · expires <t:${Math.floor(card.deadline / 1000)}:R>`;
  const body: DiscordMessageBody = {
    content: composeContent(cardHeader(spec), hints, footer),
    components: rows.map((row) => row.toJSON()),
    allowed_mentions: { parse: [], users: card.answerers.slice(0, 100) },
  };
  const problems = checkMessagePayload(body);
  if (problems.length > 0) throw new Error(`card breaks Discord limits: ${problems.join("; ")}`);
  return body;
}

/** The title and question, as the card and its settled form both show them. */
export function cardHeader(spec: AskSpec): string {
  return spec.title ? `**${spec.title}**\n${spec.question}` : spec.question;
}

export function whoMayAnswer(card: CardView): string {
  if (card.anyoneInThread || card.answerers.length === 0) return "Anyone in this thread can answer";
  return `${card.answerers.map((id) => `<@${id}>`).join(", ")} or an admin can answer`;
}

/** Header, hints and footer within 2,000 characters: the footer always fits, then the header, then the hints. */
export function composeContent(header: string, hints: string[], footer: string): string {
  const foot = truncate(footer, 300);
  const hintText = hints.join("\n");
  let room = DISCORD_LIMITS.contentChars - foot.length - 1;
  const headerRoom = hintText ? Math.max(room - hintText.length - 1, 1000) : room;
  const head = truncateClosingFence(header, Math.min(headerRoom, room));
  room -= head.length;
  const parts = [head];
  if (hintText && room > 1) parts.push(truncate(hintText, room - 1));
  parts.push(foot);
  return parts.join("\n");
}

/**
 * Cuts text like `truncate`, but a code block left open by the cut is closed again: otherwise the hints and
 * the footer after it (an approval's arguments are a code block) would render as code.
 */
export function truncateClosingFence(text: string, limit: number): string {
  const fences = (piece: string) => (piece.match(/```/g) ?? []).length;
  const cut = truncate(text, limit);
  if (cut === text || fences(cut) % 2 === 0) return cut;
  const shorter = truncate(text, limit - 4);
  return fences(shorter) % 2 === 1 ? `${shorter}\n\`\`\`` : shorter;
}

function optionButtons(spec: AskSpec, askId: AskId): ActionRowBuilder<ButtonBuilder>[] {
  const rows: ActionRowBuilder<ButtonBuilder>[] = [];
  spec.options.slice(0, MAX_OPTION_BUTTONS).forEach((option, index) => {
    if (index % DISCORD_LIMITS.buttonsPerRow === 0) rows.push(new ActionRowBuilder<ButtonBuilder>());
    const style = spec.default === option.value ? ButtonStyle.Primary : ButtonStyle.Secondary;
    rows.at(-1)!.addComponents(
      new ButtonBuilder()
        .setCustomId(componentId({ kind: "option", askId, index }))
        .setLabel(truncate(option.label, DISCORD_LIMITS.buttonLabelChars))
        .setStyle(style),
    );
  });
  return rows;
}

/** 25 options per select menu, up to 4 menus: the 100 options a spec may hold fit without paging. */
function optionSelects(spec: AskSpec, askId: AskId, kind: "pick" | "multi"): ActionRowBuilder<StringSelectMenuBuilder>[] {
  const rows: ActionRowBuilder<StringSelectMenuBuilder>[] = [];
  const size = DISCORD_LIMITS.selectOptions;
  for (let group = 0; group < MAX_SELECTS && group * size < spec.options.length; group++) {
    const slice = spec.options.slice(group * size, (group + 1) * size);
    const first = group * size + 1;
    const range = spec.options.length > size ? ` (${first}–${first + slice.length - 1})` : "";
    const select = new StringSelectMenuBuilder()
      .setCustomId(componentId({ kind, askId, group }))
      .setPlaceholder(`${kind === "multi" ? "Choose any" : "Choose one"}${range}`)
      .addOptions(
        slice.map((option, offset) => ({
          label: truncate(option.label, DISCORD_LIMITS.selectOptionTextChars),
          value: String(group * size + offset),
          ...(spec.default === option.value ? { default: true } : {}),
        })),
      );
    if (kind === "multi") select.setMinValues(0).setMaxValues(slice.length);
    rows.push(new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(select));
  }
  return rows;
}

function numberedList(options: AskOption[]): string {
  return options.map((option, index) => `${index + 1}. ${truncate(option.label, 300)}`).join("\n");
}
