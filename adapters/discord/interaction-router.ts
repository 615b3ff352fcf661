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
import type { Actor, AnswerOutcome, Engine } from "../../src/engine/engine.js";
import type { AnswerDrafts } from "./answer-drafts.js";
import { type ComponentAction, componentId, parseComponentId, parseModalId } from "./custom-id.js";
import { interactionFacts } from "./discord-facts.js";
import { outcomeNotice, stopNotice } from "./outcome-notice.js";
import { actorFrom } from "./parse-actor.js";
import { whoMayAnswer } from "./render-card.js";
import { formParts, readModalValues, renderFormModal, renderTextModal } from "./render-modal.js";

/** The empty field name, which no form field can have, holds a text answer typed in a modal. */
const TEXT_DRAFT = "";

/** Component taps and modal submits, translated into engine calls. Every path answers Discord within 3 s. */
export class InteractionRouter {
  constructor(
    private readonly engine: Engine,
    private readonly drafts: AnswerDrafts,
  ) {}

  async handleComponent(interaction: ButtonInteraction | StringSelectMenuInteraction): Promise<void> {
    const action = parseComponentId(interaction.customId);
    if (!action) return void (await interaction.reply({ content: "This button is not mine.", flags: MessageFlags.Ephemeral }));
    const actor = actorFrom(interactionFacts(interaction));
    // A modal must be the first response to the tap, so these paths must not defer.
    if (action.kind === "open" || action.kind === "other") return this.openModal(interaction, action, actor);
    await interaction.deferUpdate();
    const notice = await this.act(interaction, action, actor);
    if (notice) await interaction.followUp({ content: notice, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  }

  private async act(
    interaction: ButtonInteraction | StringSelectMenuInteraction,
    action: Exclude<ComponentAction, { kind: "open" | "other" }>,
    actor: Actor,
  ): Promise<string | undefined> {
    const values = interaction.isStringSelectMenu() ? interaction.values.map(Number).filter(Number.isInteger) : [];
    switch (action.kind) {
      case "stop":
        return stopNotice(await this.engine.stop(action.sessionId, actor));
      case "multi":
        this.drafts.setPicks(action.askId, actor.id, action.group, values);
        return undefined;
      case "cancel":
        return this.settleDrafts(action.askId, await this.engine.cancel(action.askId, actor));
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

  private async answer(askId: string, actor: Actor, input: AnswerInput): Promise<string | undefined> {
    return this.settleDrafts(askId, await this.engine.answer(askId, actor, input));
  }

  private settleDrafts(askId: string, outcome: AnswerOutcome): string | undefined {
    if (outcome.kind === "accepted" || outcome.kind === "already-ended") this.drafts.forget(askId);
    return outcomeNotice(outcome);
  }

  /** Checks the ask is open to this person before drawing a modal, so nobody fills in a form for nothing. */
  private async openModal(
    interaction: ButtonInteraction | StringSelectMenuInteraction,
    action: Extract<ComponentAction, { kind: "open" | "other" }>,
    actor: Actor,
  ): Promise<void> {
    const found = await this.engine.getAsk(action.askId);
    const refusal = !found
      ? outcomeNotice({ kind: "unknown-ask" })
      : found.ask.status !== "pending"
        ? outcomeNotice({ kind: "already-ended", status: found.ask.status })
        : this.engine.mayAnswer(found.session, actor)
          ? undefined
          : `Only ${whoMayAnswer(this.engine.cardView(found.ask, found.session))} this.`;
    if (!found || refusal !== undefined) {
      await interaction.reply({ content: refusal ?? "", flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      return;
    }
    const { spec } = found.ask;
    const draft = this.drafts.formValues(action.askId, actor.id);
    const text = typeof draft[TEXT_DRAFT] === "string" ? draft[TEXT_DRAFT] : undefined;
    const modal =
      action.kind === "other"
        ? renderTextModal(action.askId, spec, "other", text)
        : spec.type === "form"
          ? renderFormModal(action.askId, spec, action.part, draft)
          : renderTextModal(action.askId, spec, "text", text);
    await interaction.showModal(modal);
  }

  async handleModal(interaction: ModalSubmitInteraction): Promise<void> {
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const target = parseModalId(interaction.customId);
    const found = target ? await this.engine.getAsk(target.askId) : undefined;
    if (!target || !found) return void (await interaction.editReply(outcomeNotice({ kind: "unknown-ask" }) ?? ""));
    const actor = actorFrom(interactionFacts(interaction));
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
      const parts = formParts(found.ask.spec);
      if (target.part + 1 < parts.length) {
        const next = target.part + 1;
        const button = continueButton(
          componentId({ kind: "open", askId: target.askId, part: next }),
          `Continue (${next + 1}/${parts.length})`,
        );
        await interaction.editReply({ content: `Part ${next} of ${parts.length} saved.`, components: [button] });
        return;
      }
      outcome = await this.engine.answer(target.askId, actor, { kind: "form", values: merged });
      if (outcome.kind === "invalid") fixPart = firstPartWithError(parts, outcome.fieldErrors);
    } else {
      const text = submitted.text ?? "";
      this.drafts.mergeForm(target.askId, actor.id, { [TEXT_DRAFT]: text });
      outcome = await this.engine.answer(target.askId, actor, { kind: "text", text });
    }
    const notice = this.settleDrafts(target.askId, outcome);
    if (outcome.kind !== "invalid") {
      await interaction.editReply({ content: notice ?? "✅ Your answer was sent.", allowedMentions: { parse: [] } });
      return;
    }
    const fix: ComponentAction =
      target.kind === "other" ? { kind: "other", askId: target.askId } : { kind: "open", askId: target.askId, part: fixPart };
    await interaction.editReply({ content: notice ?? "", components: [continueButton(componentId(fix), "Fix")] });
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
