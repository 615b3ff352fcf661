import { z } from "zod";

/** The seven card types the model can ask for (DESIGN §2). */
export const ASK_TYPES = ["confirm", "select", "multiselect", "input", "buttons", "form", "message"] as const;
/** The model's types, and `approval`: a person's OK for one exact tool call, asked by code, never by the model. */
export type AskType = (typeof ASK_TYPES)[number] | "approval";
export const STORED_ASK_TYPES: readonly AskType[] = [...ASK_TYPES, "approval"];

export const FIELD_TYPES = ["text", "password", "number", "toggle"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const ASK_TIMEOUT_MIN_S = 5;
export const ASK_TIMEOUT_MAX_S = 7 * 24 * 60 * 60;

/** Upper bounds on what the model may put in a spec; renderers degrade below these. */
export const SPEC_LIMITS = {
  questionChars: 8000,
  titleChars: 200,
  options: 100,
  optionLabelChars: 300,
  optionValueChars: 500,
  fields: 20,
  fieldLabelChars: 300,
} as const;

export interface AskOption {
  value: string;
  label: string;
}

export interface AskField {
  name: string;
  label: string;
  type: FieldType;
  required: boolean;
}

/** What an approval is bound to: the tool and the hash of the exact arguments (DESIGN §11). */
export interface ApprovalFacts {
  /** The exposed tool name, `<server>__<tool>`. */
  tool: string;
  /** SHA-256 of the canonical JSON of the arguments shown on the card. */
  argumentsHash: string;
  /** The arguments, pretty-printed, whole (cards show them cut, with a way to see all of them). */
  argumentsText: string;
}

/** The one normalised shape every dialect becomes. It is stored, rendered and validated against. */
export interface AskSpec {
  type: AskType;
  dialect: "candidates" | "choices" | "typed";
  title?: string;
  question: string;
  options: AskOption[];
  fields: AskField[];
  default?: string | boolean;
  timeoutSeconds: number;
  allowOther: boolean;
  /** Only on `approval` specs. */
  approval?: ApprovalFacts;
  /** An ask that does not suspend the turn (a server's elicitation during a call): answering it resumes nothing. */
  detached?: true;
  /** An ask another program put through the API (DESIGN §12): who may answer it; empty, anyone who sees the card. */
  external?: { answerers: string[] };
}

export type SpecResult = { ok: true; spec: AskSpec } | { ok: false; error: string };

const RESERVED_NAMES = new Set(["__proto__", "constructor", "prototype"]);

const optionSchema = z.union([
  z.string().min(1).max(SPEC_LIMITS.optionValueChars),
  z.strictObject({
    value: z.string().min(1).max(SPEC_LIMITS.optionValueChars),
    label: z.string().min(1).max(SPEC_LIMITS.optionLabelChars).optional(),
  }),
]);

const common = {
  question: z.string(),
  title: z.string().max(SPEC_LIMITS.titleChars).optional(),
  timeout_s: z.number().finite().optional(),
  allow_other: z.boolean().optional(),
};

const fieldSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be a short identifier such as api_key"),
  label: z.string().min(1).max(SPEC_LIMITS.fieldLabelChars).optional(),
  type: z.enum(FIELD_TYPES, { error: `must be one of ${FIELD_TYPES.join(", ")}` }),
  required: z.boolean().optional(),
});

const typedSchema = z.strictObject({
  ...common,
  type: z.enum(ASK_TYPES, { error: `must be one of ${ASK_TYPES.join(", ")}` }),
  options: z.array(optionSchema).max(SPEC_LIMITS.options).optional(),
  fields: z.array(fieldSchema).max(SPEC_LIMITS.fields).optional(),
  default: z.union([z.string(), z.boolean()]).optional(),
});

const candidatesSchema = z.strictObject({
  ...common,
  candidates: z.array(optionSchema).min(1).max(SPEC_LIMITS.options),
});

const choicesSchema = z.strictObject({
  ...common,
  choices: z.array(optionSchema).min(1).max(SPEC_LIMITS.options),
});

const questionOnlySchema = z.strictObject(common);

/** The JSON schema the model sees for `ask_user`: loose on purpose, the parser gives the precise errors. */
export const ASK_USER_INPUT_SCHEMA = {
  type: "object",
  properties: {
    question: { type: "string", description: "The question, one at a time, in plain words." },
    type: { type: "string", enum: [...ASK_TYPES], description: "Typed card; preferred." },
    title: { type: "string" },
    options: {
      type: "array",
      description: "For select, multiselect, buttons: strings or {value, label}.",
      items: {
        anyOf: [
          { type: "string" },
          { type: "object", properties: { value: { type: "string" }, label: { type: "string" } }, required: ["value"] },
        ],
      },
    },
    fields: {
      type: "array",
      description: "For form: {name, label, type: text|password|number|toggle, required}.",
      items: {
        type: "object",
        properties: {
          name: { type: "string" },
          label: { type: "string" },
          type: { type: "string", enum: [...FIELD_TYPES] },
          required: { type: "boolean" },
        },
        required: ["name", "type"],
      },
    },
    candidates: { type: "array", items: { type: "string" }, description: "Alternative to a typed card." },
    choices: { type: "array", items: { type: "string" }, description: "Alternative: a strict choice list." },
    default: { description: "input: text; select/buttons: an option value; confirm: boolean." },
    timeout_s: { type: "number", description: "Seconds to wait (5 to 604800)." },
    allow_other: { type: "boolean", description: "Accept free text besides the options (default true)." },
  },
  required: ["question"],
} as const;

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const where = issue.path.length > 0 ? `"${issue.path.join(".")}"` : "input";
      if (issue.code === "unrecognized_keys") return `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
      return `${where} ${issue.message}`;
    })
    .join("; ");
}

function fail(message: string): SpecResult {
  return { ok: false, error: `ERROR: ask_user: ${message}` };
}

function normaliseOptions(raw: z.infer<typeof optionSchema>[]): AskOption[] | string {
  const options = raw.map((option) =>
    typeof option === "string" ? { value: option, label: option } : { value: option.value, label: option.label ?? option.value },
  );
  const seen = new Set<string>();
  for (const option of options) {
    if (seen.has(option.value)) return `duplicate option value "${option.value.slice(0, 80)}": every option needs a distinct value`;
    seen.add(option.value);
  }
  return options;
}

export function clampTimeout(seconds: number): number {
  return Math.min(ASK_TIMEOUT_MAX_S, Math.max(ASK_TIMEOUT_MIN_S, Math.round(seconds)));
}

/**
 * Parses the model's `ask_user` input, in any of the three dialects, into one AskSpec.
 * Errors are written for the model: what is wrong and how to fix the call.
 */
export function parseAskSpec(input: unknown, defaultTimeoutSeconds: number): SpecResult {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return fail('input must be an object such as {"type": "confirm", "question": "Deploy now?"}');
  }
  const record = input as Record<string, unknown>;
  const schema =
    "type" in record ? typedSchema : "choices" in record ? choicesSchema : "candidates" in record ? candidatesSchema : questionOnlySchema;
  const parsed = schema.safeParse(input);
  if (!parsed.success) return fail(`${describeIssues(parsed.error)}.`);
  const data = parsed.data as z.infer<typeof typedSchema> & { candidates?: unknown[]; choices?: unknown[] };

  const question = data.question.trim();
  if (question.length === 0) return fail('"question" is empty: say what you need to know in one sentence.');
  if (question.length > SPEC_LIMITS.questionChars) {
    return fail(`"question" is ${question.length} characters; keep it under ${SPEC_LIMITS.questionChars}.`);
  }
  const timeoutSeconds = clampTimeout(data.timeout_s ?? defaultTimeoutSeconds);
  const base = {
    question,
    ...(data.title?.trim() ? { title: data.title.trim() } : {}),
    timeoutSeconds,
    allowOther: data.allow_other ?? true,
    fields: [] as AskField[],
  };

  if ("candidates" in data || "choices" in data) {
    const raw = (data.candidates ?? data.choices) as z.infer<typeof optionSchema>[];
    const options = normaliseOptions(raw);
    if (typeof options === "string") return fail(`${options}.`);
    return { ok: true, spec: { ...base, type: "select", dialect: "candidates" in data ? "candidates" : "choices", options } };
  }
  if (!("type" in data)) return { ok: true, spec: { ...base, type: "input", dialect: "typed", options: [] } };

  const type = data.type;
  const needsOptions = type === "select" || type === "multiselect" || type === "buttons";
  if (needsOptions && (data.options === undefined || data.options.length === 0)) {
    return fail(`type "${type}" needs "options": a list of strings or {value, label}, for example ["staging", "production"].`);
  }
  if (!needsOptions && data.options !== undefined && data.options.length > 0) {
    return fail(`type "${type}" takes no "options"; use "select" or "buttons" to offer choices.`);
  }
  const options = normaliseOptions(data.options ?? []);
  if (typeof options === "string") return fail(`${options}.`);

  let fields: AskField[] = [];
  if (type === "form") {
    if (data.fields === undefined || data.fields.length === 0) {
      return fail('type "form" needs "fields": [{"name": "host", "label": "Host", "type": "text", "required": true}].');
    }
    const names = new Set<string>();
    for (const field of data.fields) {
      if (RESERVED_NAMES.has(field.name)) return fail(`field name "${field.name}" is reserved; pick another name.`);
      if (names.has(field.name)) return fail(`duplicate field name "${field.name}": every field needs a distinct name.`);
      names.add(field.name);
    }
    fields = data.fields.map((field) => ({
      name: field.name,
      label: field.label ?? field.name,
      type: field.type,
      required: field.required ?? false,
    }));
  } else if (data.fields !== undefined && data.fields.length > 0) {
    return fail(`type "${type}" takes no "fields"; use type "form" for several values.`);
  }

  const defaultError = checkDefault(type, data.default, options);
  if (defaultError) return fail(defaultError);

  const spec: AskSpec = { ...base, type, dialect: "typed", options, fields };
  if (data.default !== undefined) spec.default = data.default;
  if (type === "confirm" || type === "multiselect" || type === "form" || type === "message" || type === "input") {
    spec.allowOther = false;
  }
  return { ok: true, spec };
}

function checkDefault(type: AskType, value: string | boolean | undefined, options: AskOption[]): string | undefined {
  if (value === undefined) return undefined;
  if (type === "input" && typeof value === "string") return undefined;
  if (type === "confirm" && typeof value === "boolean") return undefined;
  if ((type === "select" || type === "buttons") && typeof value === "string") {
    return options.some((option) => option.value === value)
      ? undefined
      : `"default" "${value.slice(0, 80)}" is not one of the option values.`;
  }
  return `"default" for type "${type}" must be ${type === "confirm" ? "true or false" : type === "input" ? "a string" : "omitted"}.`;
}
