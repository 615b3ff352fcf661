import { z } from "zod";

/** Runtime settings of the loop; admins may change them while the bot runs. */
export const engineSettingsSchema = z.object({
  maxAskPerTurn: z.number().int().min(0).max(20),
  maxIterations: z.number().int().min(1).max(200),
  askTimeoutSeconds: z.number().int().min(5).max(604800),
  answerPolicy: z.enum(["owner", "thread"]),
  maxTokens: z.number().int().min(256).max(64000),
});

export type EngineSettings = z.infer<typeof engineSettingsSchema>;

export const DEFAULT_SETTINGS: EngineSettings = {
  maxAskPerTurn: 3,
  maxIterations: 20,
  askTimeoutSeconds: 86400,
  answerPolicy: "owner",
  maxTokens: 4096,
};

/** The settings in force now: read at each step, replaced whole by an admin's change. */
export interface RuntimeSettings {
  get(): EngineSettings;
  update(next: EngineSettings): void;
}

export function createRuntimeSettings(initial: Partial<EngineSettings> = {}): RuntimeSettings {
  let current = engineSettingsSchema.parse({ ...DEFAULT_SETTINGS, ...initial });
  return {
    get: () => current,
    update: (next) => {
      current = engineSettingsSchema.parse(next);
    },
  };
}
