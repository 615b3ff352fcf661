import { z } from "zod";
import { ConfigError } from "./errors.js";

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

/** The whole environment, parsed once at start (DESIGN §7). */
export const configSchema = z
  .object({
    ANTHROPIC_API_KEY: optionalText,
    ANTHROPIC_BASE_URL: optionalText.pipe(z.url().optional()),
    ANTHROPIC_MODEL: optionalText.transform((value) => value ?? "claude-sonnet-5-5"),
    SLACK_BOT_TOKEN: optionalText,
    SLACK_SIGNING_SECRET: optionalText,
    SLACK_APP_TOKEN: optionalText,
    SLACK_API_URL: optionalText.pipe(z.url().optional()),
    DISCORD_TOKEN: optionalText,
    DISCORD_APPLICATION_ID: optionalText,
    DISCORD_API_URL: optionalText.pipe(z.url().optional()),
    DISCORD_GUILD_ID: optionalText,
    DISCORD_MESSAGE_CONTENT: optionalText
      .transform((value) => value ?? "true")
      .pipe(z.enum(["true", "false"], { error: "must be true or false" }))
      .transform((value) => value === "true"),
    PORT: integer(3000, 0, 65535),
    HOST: optionalText.transform((value) => value ?? "127.0.0.1"),
    DATABASE_PATH: optionalText.transform((value) => value ?? "./data/parley.db"),
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
    LOG_LEVEL: optionalText
      .transform((value) => value ?? "info")
      .pipe(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])),
  })
  .superRefine((config, context) => {
    if (config.SLACK_BOT_TOKEN && !config.SLACK_SIGNING_SECRET && !config.SLACK_APP_TOKEN) {
      context.addIssue({
        code: "custom",
        path: ["SLACK_SIGNING_SECRET"],
        message: "is required with SLACK_BOT_TOKEN in HTTP mode (or set SLACK_APP_TOKEN)",
      });
    }
    if ((config.SLACK_SIGNING_SECRET || config.SLACK_APP_TOKEN) && !config.SLACK_BOT_TOKEN) {
      context.addIssue({ code: "custom", path: ["SLACK_BOT_TOKEN"], message: "is required when other SLACK_ variables are set" });
    }
    if (Boolean(config.DISCORD_TOKEN) !== Boolean(config.DISCORD_APPLICATION_ID)) {
      const missing = config.DISCORD_TOKEN ? "DISCORD_APPLICATION_ID" : "DISCORD_TOKEN";
      context.addIssue({ code: "custom", path: [missing], message: "is required: set both DISCORD_TOKEN and DISCORD_APPLICATION_ID" });
    }
  });

export type Config = z.infer<typeof configSchema>;

/** Parses the environment; the error names every bad variable, never its value (it may be a secret). */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(environment);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "environment"}: ${issue.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
}
