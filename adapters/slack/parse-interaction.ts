import { z } from "zod";
import type { AnswerInput } from "../../src/ask/answer.js";
import type { AskId, SessionId } from "../../src/ports/ids.js";
import { type ActionId, actionIds, parseActionId, parseOptionIndex } from "./action-ids.js";

const optionSchema = z.object({ value: z.string() });

const actionSchema = z.object({
  action_id: z.string(),
  value: z.string().optional(),
  selected_option: optionSchema.nullish(),
  selected_options: z.array(optionSchema).optional(),
});

const stateElementSchema = z.object({
  selected_options: z.array(optionSchema).optional(),
});

const blockActionsSchema = z.object({
  user: z.object({ id: z.string() }),
  team: z.object({ id: z.string() }).nullish(),
  trigger_id: z.string().optional(),
  channel: z.object({ id: z.string() }).optional(),
  message: z.object({ ts: z.string(), thread_ts: z.string().optional() }).optional(),
  actions: z.array(actionSchema).min(1),
  state: z.object({ values: z.record(z.string(), z.record(z.string(), stateElementSchema)) }).optional(),
});

/** What a tap means for the engine. */
export type Interaction =
  | { kind: "answer"; askId: AskId; input: AnswerInput }
  | { kind: "cancel"; askId: AskId }
  | { kind: "open"; askId: AskId; triggerId: string }
  /** "Show all arguments": a read-only modal, for anyone who can see the card. */
  | { kind: "arguments"; askId: AskId; triggerId: string }
  | { kind: "stop"; sessionId: SessionId }
  /** A checkbox ticked before Done: nothing to do until Done. */
  | { kind: "none" };

export interface ParsedInteraction {
  userId: string;
  /** The workspace, which with channel and thread names the conversation the card belongs to. */
  teamId: string | undefined;
  /** Where to tell the person something privately: the card's channel and thread. */
  channel: string | undefined;
  thread: string | undefined;
  interaction: Interaction;
}

export function parseBlockActions(raw: unknown): ParsedInteraction | undefined {
  const parsed = blockActionsSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const body = parsed.data;
  const action = body.actions[0];
  const id = action ? parseActionId(action.action_id) : undefined;
  if (!action || !id) return undefined;
  const interaction = interpret(id, action, body.state?.values ?? {}, body.trigger_id);
  if (!interaction) return undefined;
  return {
    userId: body.user.id,
    teamId: body.team?.id,
    channel: body.channel?.id,
    thread: body.message ? (body.message.thread_ts ?? body.message.ts) : undefined,
    interaction,
  };
}

function interpret(
  id: ActionId,
  action: z.infer<typeof actionSchema>,
  state: Record<string, Record<string, z.infer<typeof stateElementSchema>>>,
  triggerId: string | undefined,
): Interaction | undefined {
  switch (id.kind) {
    case "option":
      return { kind: "answer", askId: id.askId, input: { kind: "option", index: id.index } };
    case "select": {
      const index = parseOptionIndex(action.selected_option?.value ?? undefined);
      return index === undefined ? undefined : { kind: "answer", askId: id.askId, input: { kind: "option", index } };
    }
    case "pick":
      return { kind: "none" };
    case "done": {
      const indexes = pickedIndexes(id.askId, state);
      return indexes === undefined ? undefined : { kind: "answer", askId: id.askId, input: { kind: "options", indexes } };
    }
    case "continue":
      return { kind: "answer", askId: id.askId, input: { kind: "acknowledge" } };
    case "cancel":
      return { kind: "cancel", askId: id.askId };
    case "open":
      return triggerId ? { kind: "open", askId: id.askId, triggerId } : undefined;
    case "arguments":
      return triggerId ? { kind: "arguments", askId: id.askId, triggerId } : undefined;
    case "stop":
      return { kind: "stop", sessionId: id.sessionId };
  }
}

/** The boxes ticked on the card when Done was tapped; none ticked is an empty answer, not a missing one. */
function pickedIndexes(askId: string, state: Record<string, Record<string, z.infer<typeof stateElementSchema>>>): number[] | undefined {
  const pickId = actionIds.pick(askId);
  for (const elements of Object.values(state)) {
    const element = elements[pickId];
    if (!element) continue;
    const indexes = (element.selected_options ?? []).map((option) => parseOptionIndex(option.value));
    return indexes.every((index) => index !== undefined) ? (indexes as number[]) : undefined;
  }
  return [];
}
