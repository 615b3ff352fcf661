import { z } from "zod";
import { apiTokensProblem, parseApiTokens } from "./api/api-tokens.js";
import { DEFAULT_MODEL_RETRY_MAX_S } from "./loop/call-model.js";
import { ConfigError } from "./ports/errors.js";
import { parsePolicyRules } from "./tools/tool-policy.js";
import { unknownVariableProblems } from "./unknown-variables.js";

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));
const integer = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((value) => (value?.trim() ? Number(value) : fallback))
    .pipe(z.number().int().min(min).max(max));

/** The whole environment (DESIGN §7): one shape, parsed once at start; scripts pick the part they need. */
const configShape = {
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText.pipe(z.url().optional()),
  ANTHROPIC_MODEL: optionalText.transform((value) => value ?? "claude-sonnet-5-5"),
  MODEL_RETRY_MAX_S: integer(DEFAULT_MODEL_RETRY_MAX_S, 0, 3600),
  SLACK_BOT_TOKEN: optionalText,
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_APP_TOKEN: optionalText,
  SLACK_API_URL: optionalText.pipe(z.url().optional()),
  DISCORD_TOKEN: optionalText,
  DISCORD_APPLICATION_ID: optionalText.pipe(z.string().regex(/^\d+$/, "must be the application's numeric id").optional()),
  DISCORD_GUILD_ID: optionalText.pipe(z.string().regex(/^\d+$/, "must be a numeric server id").optional()),
  DISCORD_API_URL: optionalText.pipe(z.url().optional()),
  DISCORD_MESSAGE_CONTENT: optionalText
    .transform((value) => value ?? "true")
    .pipe(z.enum(["true", "false"], { error: "must be true or false" }))
    .transform((value) => value === "true"),
  PORT: integer(3000, 0, 65535),
  HOST: optionalText.transform((value) => value ?? "127.0.0.1"),
  DATABASE_PATH: optionalText.transform((value) => value ?? "./data/parley.db"),
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(?:ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),
  ),
  ADMIN_USER_IDS: optionalText.transform((value) =>
    (value ?? "")
      .split(",")
      .map((id) => id.trim())
      .filter((id) => id.length > 0),
  ),
  ANSWER_POLICY: optionalText.transform((value) => value ?? "owner").pipe(z.enum(["owner", "thread"])),
  MAX_ASK_USER_PER_TURN: integer(3, 0, 20),
  MAX_ITERATIONS: integer(20, 1, 200),
  ASK_TIMEOUT_S: integer(86400, 5, 604800),
  SYSTEM_PROMPT: optionalText,
  SYSTEM_PROMPT_FILE: optionalText,
  MCP_CONFIG: optionalText,
  TOOL_POLICY: optionalText.transform((value, context) => {
    const parsed = parsePolicyRules(value ?? "");
    if (!parsed.ok) {
      context.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    }
    return parsed.rules;
  }),
  TOOL_TIMEOUT_S: integer(120, 1, 3600),
  TOOL_RESULT_MAX_CHARS: integer(50_000, 1000, 1_000_000),
  API_TOKENS: optionalText.transform((value, context) => {
    const problem = apiTokensProblem(value ?? "");
    if (problem) {
      context.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    return parseApiTokens(value);
  }),
  API_RATE_LIMIT: integer(120, 1, 100_000),
  LOG_LEVEL: optionalText
    .transform((value) => (value ?? "info").toLowerCase())
    .pipe(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])),
  LOG_FILE: optionalText,
};

export const configSchema = z.object(configShape);

/** Rules across variables, read from the raw environment so they are reported in the same run as the rest. */
function crossFieldProblems(environment: Record<string, string | undefined>): string[] {
  const set = (name: string) => Boolean(environment[name]?.trim());
  const problems: string[] = [];
  if (!set("ANTHROPIC_API_KEY") && !set("ANTHROPIC_BASE_URL")) problems.push("ANTHROPIC_API_KEY: is required to talk to the model");
  if (set("SLACK_BOT_TOKEN") && !set("SLACK_SIGNING_SECRET") && !set("SLACK_APP_TOKEN"))
    problems.push("SLACK_SIGNING_SECRET: is required with SLACK_BOT_TOKEN in HTTP mode (or set SLACK_APP_TOKEN)");
  if ((set("SLACK_SIGNING_SECRET") || set("SLACK_APP_TOKEN")) && !set("SLACK_BOT_TOKEN"))
    problems.push("SLACK_BOT_TOKEN: is required when other SLACK_ variables are set");
  if (set("DISCORD_TOKEN") !== set("DISCORD_APPLICATION_ID")) {
    const missing = set("DISCORD_TOKEN") ? "DISCORD_APPLICATION_ID" : "DISCORD_TOKEN";
    problems.push(`${missing}: is required: set both DISCORD_TOKEN and DISCORD_APPLICATION_ID`);
  }
  return problems;
}

export type Config = z.infer<typeof configSchema>;

/**
 * Parses the environment; the error names every bad variable, never its value (it may be a secret). A variable
 * that looks like a slip of one Parley reads (`SLACK_TOKEN`) is refused first: it would otherwise go unread.
 */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(environment);
  const problems = [
    ...unknownVariableProblems(environment, Object.keys(configShape)),
    ...(parsed.success ? [] : issueLines(parsed.error.issues)),
    ...crossFieldProblems(environment),
  ];
  if (parsed.success && problems.length === 0) return parsed.data;
  throw new ConfigError(describeProblems(problems));
}

/** Variables a script cannot run without, and what it needs them for ("to register /parley"), as the error says. */
export interface RequiredVariables<Key> {
  keys: readonly Key[];
  purpose: string;
}

/** The variables a script picked, the required ones known to be set. */
export type ConfigPart<Key extends keyof Config, Required extends Key> = Pick<Config, Key> & {
  [Name in Required]: NonNullable<Config[Name]>;
};

/**
 * Parses only the named variables with the same rules (for scripts such as register-commands). The required ones
 * are checked in the same pass, so a missing variable and a bad one are reported together.
 */
export function loadConfigPart<Key extends keyof typeof configShape, Required extends Key = never>(
  environment: Record<string, string | undefined>,
  keys: readonly Key[],
  required: RequiredVariables<Required> = { keys: [], purpose: "" },
): ConfigPart<Key, Required> {
  const shape = Object.fromEntries(keys.map((key) => [key, configShape[key]]));
  const parsed = z.object(shape).safeParse(environment);
  const problems = [
    ...(parsed.success ? [] : issueLines(parsed.error.issues)),
    ...required.keys.filter((key) => !environment[key]?.trim()).map((key) => `${key}: is required ${required.purpose}`),
  ];
  if (parsed.success && problems.length === 0) return parsed.data as unknown as ConfigPart<Key, Required>;
  throw new ConfigError(describeProblems(problems));
}

/** One problem fits on one line; several are listed one a line. */
function describeProblems(problems: readonly string[]): string {
  if (problems.length === 1) return `invalid configuration: ${problems[0]}`;
  return `invalid configuration:\n${problems.map((line) => `  ${line}`).join("\n")}`;
}

function issueLines(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`);
}
