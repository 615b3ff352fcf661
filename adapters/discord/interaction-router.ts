import {
  ActionRowBuilder,
  ButtonBuilder,
  type ButtonInteraction,
  ButtonStyle,
  MessageFlags,
  type ModalSubmitInteraction,
  type StringSelectMenuInteraction,
} from "discord.js";
import type { AnswerInput } from "../../src/ask/answer.js";
import { DENY_REASON_FIELD } from "../../src/ask/approval.js";
import type { Actor, AnswerOutcome, Conversation } from "../../src/ports/conversation.js";
import type { AskId } from "../../src/ports/ids.js";
import { answerNotice, stopNotice } from "../../src/ports/notices.js";
import type { RichText } from "../../src/ports/rich-text.js";
import type { AnswerDrafts } from "./answer-drafts.js";
import { type ComponentAction, componentId, parseComponentId, parseModalId } from "./custom-id.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import { interactionFacts } from "./discord-facts.js";
import { actorFrom, conversationFrom } from "./parse-actor.js";
import { renderArgumentsReply } from "./render-arguments.js";
import { formParts, readModalValues, renderDenyModal, renderFormModal, renderTextModal } from "./render-modal.js";

/** The empty field name, which no form field can have, holds a text answer typed in a modal. */
const TEXT_DRAFT = "";

const notice = (text: RichText | undefined): string | undefined => (text ? toDiscordMarkdown(text) : undefined);

/** Component taps and modal submits, translated into core calls. Every path answers Discord within 3 s. */
export class InteractionRouter {
  constructor(
    private readonly conversation: Conversation,
    private readonly drafts: AnswerDrafts,
  ) {}

  async handleComponent(interaction: ButtonInteraction | StringSelectMenuInteraction): Promise<void> {
    const action = parseComponentId(interaction.customId);
    if (!action) return void (await interaction.reply({ content: "This button is not mine.", flags: MessageFlags.Ephemeral }));
    const actor = actorFrom(interactionFacts(interaction));
    // A modal must be the first response to the tap, so these paths must not defer.
    if (action.kind === "open" || action.kind === "other") return this.openModal(interaction, action, actor);
    if (action.kind === "arguments") return this.showArguments(interaction, action.askId);
    await interaction.deferUpdate();
    const text = await this.act(interaction, action, actor);
    if (text) await interaction.followUp({ content: text, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  }

  private async act(
    interaction: ButtonInteraction | StringSelectMenuInteraction,
    action: Exclude<ComponentAction, { kind: "open" | "other" | "arguments" }>,
    actor: Actor,
  ): Promise<string | undefined> {
    const values = interaction.isStringSelectMenu() ? interaction.values.map(Number).filter(Number.isInteger) : [];
    switch (action.kind) {
      case "stop":
        return notice(stopNotice(await this.conversation.stop(action.sessionId, actor)));
      case "multi":
        this.drafts.setPicks(action.askId, actor.id, action.group, values);
        return undefined;
      case "cancel":
        return this.settleDrafts(action.askId, await this.conversation.cancel(action.askId, actor));
      case "pick":
        if (values[0] === undefined) return undefined;
        return this.answer(action.askId, actor, { kind: "option", index: values[0] });
      case "option":
        return this.answer(action.askId, actor, { kind: "option", index: action.index });
      case "done":
        return this.answer(action.askId, actor, { kind: "options", indexes: this.drafts.allPicks(action.askId, actor.id) });
      case "continue":
        return this.answer(action.askId, actor, { kind: "acknowledge" });
    }
  }

  private async answer(askId: AskId, actor: Actor, input: AnswerInput): Promise<string | undefined> {
    return this.settleDrafts(askId, await this.conversation.answer(askId, actor, input));
  }

  private settleDrafts(askId: AskId, outcome: AnswerOutcome): string | undefined {
    if (outcome.kind === "accepted" || outcome.kind === "already-ended") this.drafts.forget(askId);
    return notice(answerNotice(outcome));
  }

  /**
   * Reading an approval's arguments changes nothing, so anyone who sees the card may; the ask must still be the
   * one its conversation waits on. The file may take a moment to upload, so the reply is deferred first.
   */
  private async showArguments(interaction: ButtonInteraction | StringSelectMenuInteraction, askId: AskId): Promise<void> {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const conversation = conversationFrom(interactionFacts(interaction));
    const card = conversation ? await this.conversation.pendingCard(conversation) : undefined;
    const approval = card?.askId === askId ? card.spec.approval : undefined;
    if (!approval) {
      const content = notice(answerNotice({ kind: "unknown-ask" })) ?? "";
      await interaction.editReply({ content, allowedMentions: { parse: [] } });
      return;
    }
    await interaction.editReply(renderArgumentsReply(approval.tool, approval.argumentsText, interaction.attachmentSizeLimit));
  }

  /** Checks the ask is open to this person before drawing a modal, so nobody fills in a form for nothing. */
  private async openModal(
    interaction: ButtonInteraction | StringSelectMenuInteraction,
    action: Extract<ComponentAction, { kind: "open" | "other" }>,
    actor: Actor,
  ): Promise<void> {
    const open = await this.conversation.openAnswer(action.askId, actor);
    if (!open.ok) {
      const content = notice(answerNotice(open.outcome)) ?? "";
      await interaction.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      return;
    }
    const { spec } = open.card;
    const draft = this.drafts.formValues(action.askId, actor.id);
    const text = typeof draft[TEXT_DRAFT] === "string" ? draft[TEXT_DRAFT] : undefined;
    const modal =
      action.kind === "other"
        ? renderTextModal(action.askId, spec, "other", text)
        : spec.type === "form"
          ? renderFormModal(action.askId, spec, action.part, draft)
          : spec.type === "approval"
            ? renderDenyModal(action.askId, spec, text)
            : renderTextModal(action.askId, spec, "text", text);
    await interaction.showModal(modal);
  }

  async handleModal(interaction: ModalSubmitInteraction): Promise<void> {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const target = parseModalId(interaction.customId);
    const actor = actorFrom(interactionFacts(interaction));
    const open = target ? await this.conversation.openAnswer(target.askId, actor) : undefined;
    if (!target || !open) return void (await interaction.editReply(notice(answerNotice({ kind: "unknown-ask" })) ?? ""));
    // Refused or ended: the answer below says so in the one wording, and changes nothing.
    const spec = open.ok ? open.card.spec : undefined;
    const submitted = readModalValues(
      [...interaction.fields.fields.values()].map((field) => ({
        customId: field.customId,
        ...("value" in field && typeof field.value === "string" ? { value: field.value } : {}),
        ...("values" in field && field.values ? { values: field.values } : {}),
      })),
    );
    let outcome: AnswerOutcome;
    let fixPart = 0;
    if (target.kind === "part") {
      const merged = this.drafts.mergeForm(target.askId, actor.id, submitted.values);
      const parts = spec ? formParts(spec) : [];
      if (spec && target.part + 1 < parts.length) {
        const next = target.part + 1;
        const button = continueButton(
          componentId({ kind: "open", askId: target.askId, part: next }),
          `Continue (${next + 1}/${parts.length})`,
        );
        await interaction.editReply({ content: `Part ${next} of ${parts.length} saved.`, components: [button] });
        return;
      }
      outcome = await this.conversation.answer(target.askId, actor, { kind: "form", values: merged });
      if (outcome.kind === "invalid") fixPart = firstPartWithError(parts, outcome.fieldErrors);
    } else {
      const text = submitted.text ?? "";
      this.drafts.mergeForm(target.askId, actor.id, { [TEXT_DRAFT]: text });
      // The Deny form's box is a reason, never a decision: it goes as the form field the core always reads as a denial.
      const input: AnswerInput =
        spec?.type === "approval" ? { kind: "form", values: { [DENY_REASON_FIELD]: text } } : { kind: "text", text };
      outcome = await this.conversation.answer(target.askId, actor, input);
    }
    const reply = this.settleDrafts(target.askId, outcome);
    if (outcome.kind !== "invalid") {
      await interaction.editReply({ content: reply ?? "✅ Your answer was sent.", allowedMentions: { parse: [] } });
      return;
    }
    const fix: ComponentAction =
      target.kind === "other" ? { kind: "other", askId: target.askId } : { kind: "open", askId: target.askId, part: fixPart };
    await interaction.editReply({ content: reply ?? "", components: [continueButton(componentId(fix), "Fix")] });
  }
}

function continueButton(customId: string, label: string): ActionRowBuilder<ButtonBuilder> {
  return new ActionRowBuilder<ButtonBuilder>().addComponents(
    new ButtonBuilder().setCustomId(customId).setLabel(label).setStyle(ButtonStyle.Primary),
  );
}

function firstPartWithError(parts: Array<Array<{ name: string }>>, fieldErrors: Record<string, string> | undefined): number {
  if (!fieldErrors) return 0;
  const index = parts.findIndex((fields) => fields.some((field) => Object.hasOwn(fieldErrors, field.name)));
  return Math.max(0, index);
}
