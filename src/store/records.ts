import { z } from "zod";
import { ASK_TYPES, type AskSpec, FIELD_TYPES } from "../ask/spec.js";
import { StoreError } from "../errors.js";
import type { ChatMessage, ToolResultBlock } from "../ports/model-client.js";
import type { AskAnswer } from "../ports/session-store.js";

/** The version written on every stored row; a row of any other version is refused, never guessed at. */
export const RECORD_VERSION = 1;

const toolResultSchema = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.string(),
  is_error: z.boolean().optional(),
});

const contentSchema = z.array(
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("text"), text: z.string() }),
    z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown() }),
    toolResultSchema,
  ]),
);

const specSchema = z.object({
  type: z.enum(ASK_TYPES),
  dialect: z.enum(["candidates", "choices", "typed"]),
  title: z.string().optional(),
  question: z.string().min(1),
  options: z.array(z.object({ value: z.string(), label: z.string() })),
  fields: z.array(z.object({ name: z.string(), label: z.string(), type: z.enum(FIELD_TYPES), required: z.boolean() })),
  default: z.union([z.string(), z.boolean()]).optional(),
  timeoutSeconds: z.number(),
  allowOther: z.boolean(),
});

const answerSchema = z.object({
  value: z.union([
    z.string(),
    z.boolean(),
    z.array(z.string()),
    z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    z.null(),
  ]),
  other: z.literal(true).optional(),
});

export function checkVersion(kind: string, version: number): void {
  if (version !== RECORD_VERSION) {
    throw new StoreError("unknown-schema-version", `${kind} row has schema version ${version}; this Parley reads only ${RECORD_VERSION}`);
  }
}

function parseJson<T>(kind: string, schema: z.ZodType<T>, text: string): T {
  const parsed = schema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new StoreError("corrupt-row", `${kind} row does not match its schema: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/**
 * Messages are the bulk of every read (the whole history, each resume), so they are checked by a hand-written
 * guard of the same shape as `contentSchema` instead of zod: about ten times cheaper per message.
 * Writes still go through zod (`writeContent`), so only what was valid ever lands.
 */
export function readContent(text: string): ChatMessage["content"] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every(isBlock)) throw new StoreError("corrupt-row", "message row does not match its schema");
  return value as ChatMessage["content"];
}

function isBlock(block: unknown): boolean {
  if (typeof block !== "object" || block === null) return false;
  const record = block as Record<string, unknown>;
  switch (record.type) {
    case "text":
      return typeof record.text === "string";
    case "tool_use":
      return typeof record.id === "string" && typeof record.name === "string";
    case "tool_result":
      return typeof record.tool_use_id === "string" && typeof record.content === "string";
    default:
      return false;
  }
}

export function readSpec(text: string): AskSpec {
  return parseJson("ask spec", specSchema, text) as AskSpec;
}

export function readSiblingResults(text: string): ToolResultBlock[] {
  return parseJson("ask sibling results", z.array(toolResultSchema), text) as ToolResultBlock[];
}

export function readAnswer(text: string | null): AskAnswer | null {
  return text === null ? null : (parseJson("ask answer", answerSchema, text) as AskAnswer);
}

/** Validates before writing: a row that could not be read back is never written. */
export function writeSpec(spec: AskSpec): string {
  return JSON.stringify(specSchema.parse(spec));
}

export function writeContent(content: ChatMessage["content"]): string {
  return JSON.stringify(contentSchema.parse(content));
}
