import { type EngineSettings, engineSettingsSchema } from "../engine/settings.js";
import type { ConfigKey } from "./parse-command.js";

/** Which engine setting each `/parley config` key changes. */
export const CONFIG_FIELDS: Record<ConfigKey, keyof EngineSettings> = {
  "ask-budget": "maxAskPerTurn",
  "ask-timeout": "askTimeoutSeconds",
  "answer-policy": "answerPolicy",
  "max-iterations": "maxIterations",
};

/** Applies one textual change; the whole result is validated, so a bad value changes nothing. */
export function applySetting(
  settings: EngineSettings,
  key: ConfigKey,
  value: string,
): { ok: true; settings: EngineSettings } | { ok: false; error: string } {
  const field = CONFIG_FIELDS[key];
  const typed = field === "answerPolicy" ? value : /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
  const parsed = engineSettingsSchema.safeParse({ ...settings, [field]: typed });
  if (parsed.success) return { ok: true, settings: parsed.data };
  return { ok: false, error: `${key}: ${parsed.error.issues[0]?.message ?? "invalid value"}` };
}

/** Stored admin changes win over the environment's defaults; a stored value that no longer validates is skipped. */
export function withStoredSettings(base: EngineSettings, stored: Record<string, string>): EngineSettings {
  let settings = base;
  for (const [key, value] of Object.entries(stored)) {
    if (!Object.hasOwn(CONFIG_FIELDS, key)) continue;
    const applied = applySetting(settings, key as ConfigKey, value);
    if (applied.ok) settings = applied.settings;
  }
  return settings;
}
