import { z } from "zod";
import type { AnswerInput } from "../../src/ask/answer.js";
import { type AskId, asAskId } from "../../src/ports/ids.js";
import { ANSWER_BLOCK_ID, fieldBlockId, fieldNameOf, VALUE_ACTION_ID } from "./render-modal.js";

const elementStateSchema = z.object({
  type: z.string(),
  value: z.string().nullish(),
  selected_options: z.array(z.object({ value: z.string() })).optional(),
});

const viewSubmissionSchema = z.object({
  user: z.object({ id: z.string() }),
  view: z.object({
    private_metadata: z.string().max(3000),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), elementStateSchema)) }),
  }),
});

const metadataSchema = z.object({ askId: z.string().min(1).max(100) });

export interface ParsedSubmission {
  askId: AskId;
  userId: string;
  input: AnswerInput;
  /** Where a general error is shown when it belongs to no one field. */
  firstBlockId: string;
}

export function parseViewSubmission(raw: unknown): ParsedSubmission | undefined {
  const parsed = viewSubmissionSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const metadata = metadataSchema.safeParse(safeJson(parsed.data.view.private_metadata));
  if (!metadata.success) return undefined;
  const values = parsed.data.view.state.values;
  const answer = values[ANSWER_BLOCK_ID]?.[VALUE_ACTION_ID];
  let input: AnswerInput;
  if (answer) input = { kind: "text", text: answer.value ?? "" };
  else {
    const entries: Array<[string, string | boolean | undefined]> = [];
    for (const [blockId, elements] of Object.entries(values)) {
      const name = fieldNameOf(blockId);
      const element = Object.hasOwn(elements, VALUE_ACTION_ID) ? elements[VALUE_ACTION_ID] : undefined;
      if (!name || !element) continue;
      entries.push([name, element.type === "checkboxes" ? (element.selected_options ?? []).length > 0 : (element.value ?? undefined)]);
    }
    // fromEntries defines own keys, so a block named `field-__proto__` stays data and never reaches the prototype.
    input = { kind: "form", values: Object.fromEntries(entries) };
  }
  return {
    askId: asAskId(metadata.data.askId),
    userId: parsed.data.user.id,
    input,
    firstBlockId: Object.keys(values)[0] ?? ANSWER_BLOCK_ID,
  };
}

/** Field errors keyed by field name become Slack's errors keyed by block id; a general one sits on the first box. */
export function submissionErrors(
  submission: Pick<ParsedSubmission, "firstBlockId">,
  message: string,
  fieldErrors: Record<string, string> | undefined,
): Record<string, string> {
  if (fieldErrors && Object.keys(fieldErrors).length > 0) {
    return Object.fromEntries(Object.entries(fieldErrors).map(([name, text]) => [fieldBlockId(name), text]));
  }
  return { [submission.firstBlockId]: message };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
