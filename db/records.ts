import { type AskSpec, FIELD_TYPES, STORED_ASK_TYPES } from "../src/ask/spec.js";
import { StoreError } from "../src/ports/errors.js";
import { type Platform, parsePlatform } from "../src/ports/ids.js";
import type { ChatMessage, ToolResultBlock } from "../src/ports/model-client.js";
import type { AskAnswer, PendingReply } from "../src/ports/session-store.js";

/** The version written on every stored row; a row of any other version is refused, never guessed at. */
export const RECORD_VERSION = 1;

// Stored JSON is checked on every read by the hand-written guards below, not zod: a resume reads the whole
// history, and zod costs ~40 µs per object on this kind of machine against ~1 µs for a guard (bench/RESULTS.md).
// What is written was built by typed code from parsed input (parseAskSpec, the model client), so it is valid.

type Guard = (value: unknown) => boolean;

const ASK_TYPE_SET = new Set<string>(STORED_ASK_TYPES);
const FIELD_TYPE_SET = new Set<string>(FIELD_TYPES);
const isString = (value: unknown): value is string => typeof value === "string";
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const arrayOf = (guard: Guard) => (value: unknown) => Array.isArray(value) && value.every(guard);

const isImageBlock: Guard = (value) =>
  isRecord(value) &&
  value.type === "image" &&
  isRecord(value.source) &&
  value.source.type === "base64" &&
  isString(value.source.media_type) &&
  isString(value.source.data);
const isResultPart: Guard = (value) => (isRecord(value) && value.type === "text" && isString(value.text)) || isImageBlock(value);

const isToolResult: Guard = (value) =>
  isRecord(value) &&
  value.type === "tool_result" &&
  isString(value.tool_use_id) &&
  (isString(value.content) || arrayOf(isResultPart)(value.content)) &&
  (value.is_error === undefined || typeof value.is_error === "boolean");

const isBlock: Guard = (value) => {
  if (!isRecord(value)) return false;
  if (value.type === "text") return isString(value.text);
  if (value.type === "tool_use") return isString(value.id) && isString(value.name);
  return isToolResult(value);
};

const isOption: Guard = (value) => isRecord(value) && isString(value.value) && isString(value.label);
const isField: Guard = (value) =>
  isRecord(value) &&
  isString(value.name) &&
  isString(value.label) &&
  FIELD_TYPE_SET.has(value.type as string) &&
  typeof value.required === "boolean";

const isSpec: Guard = (value) =>
  isRecord(value) &&
  ASK_TYPE_SET.has(value.type as string) &&
  (value.dialect === "candidates" || value.dialect === "choices" || value.dialect === "typed") &&
  isString(value.question) &&
  value.question.length > 0 &&
  (value.title === undefined || isString(value.title)) &&
  arrayOf(isOption)(value.options) &&
  arrayOf(isField)(value.fields) &&
  (value.default === undefined || isString(value.default) || typeof value.default === "boolean") &&
  typeof value.timeoutSeconds === "number" &&
  typeof value.allowOther === "boolean" &&
  (value.detached === undefined || value.detached === true) &&
  (value.external === undefined || (isRecord(value.external) && arrayOf(isString)(value.external.answerers))) &&
  (value.approval === undefined ||
    (isRecord(value.approval) &&
      isString(value.approval.tool) &&
      isString(value.approval.argumentsHash) &&
      isString(value.approval.argumentsText)));

const isAnswerValue: Guard = (value) =>
  value === null ||
  isString(value) ||
  typeof value === "boolean" ||
  arrayOf(isString)(value) ||
  (isRecord(value) && Object.values(value).every((item) => isString(item) || typeof item === "number" || typeof item === "boolean"));

const isAnswer: Guard = (value) => isRecord(value) && isAnswerValue(value.value) && (value.other === undefined || value.other === true);

export function checkVersion(kind: string, version: number): void {
  if (version !== RECORD_VERSION) {
    throw new StoreError("unknown-schema-version", `${kind} row has schema version ${version}; this Parley reads only ${RECORD_VERSION}`);
  }
}

function read<T>(kind: string, guard: Guard, text: string): T {
  const value: unknown = JSON.parse(text);
  if (!guard(value)) throw new StoreError("corrupt-row", `${kind} row does not match its schema`);
  return value as T;
}

/** A stored platform name, checked: a row naming a platform this Parley does not know is corrupt, not guessed. */
export function readPlatform(text: string): Platform {
  const platform = parsePlatform(text);
  if (platform === undefined) throw new StoreError("corrupt-row", `session row names an unknown platform ${JSON.stringify(text)}`);
  return platform;
}

export const readContent = (text: string) => read<ChatMessage["content"]>("message", arrayOf(isBlock), text);
export const readSpec = (text: string) => read<AskSpec>("ask spec", isSpec, text);
export const readSiblingResults = (text: string) => read<ToolResultBlock[]>("ask sibling results", arrayOf(isToolResult), text);
export const readToolResult = (text: string) => read<ToolResultBlock>("tool call result", isToolResult, text);
export const readAnswer = (text: string | null) => (text === null ? null : read<AskAnswer>("ask answer", isAnswer, text));

/** Refuses to write what could not be read back. */
function write(kind: string, guard: Guard, value: unknown): string {
  if (!guard(value)) throw new StoreError("invalid-row", `refusing to write a ${kind} that does not match its schema`);
  return JSON.stringify(value);
}

export const writeSpec = (spec: AskSpec) => write("ask spec", isSpec, spec);
export const writeToolResult = (result: ToolResultBlock) => write("tool call result", isToolResult, result);
export const writeContent = (content: ChatMessage["content"]) => write("message", arrayOf(isBlock), content);

/** A final answer's outbox row in column order (key, session, text, created, post owner, post until), for both stores. */
export function replyRow(
  reply: Omit<PendingReply, "sessionId">,
  sessionId: string,
  now: number,
): [string, string, string, number, string | null, number | null] {
  return [reply.key, sessionId, reply.text, now, reply.claim?.owner ?? null, reply.claim?.until ?? null];
}
