import { pino } from "pino";

import type { Logger } from "./ports/logger.js";

export { type Logger, SILENT_LOGGER } from "./ports/logger.js";

/** Paths pino blanks out wherever they appear: tokens and answers never reach the log. */
export const REDACTED_PATHS = ["*.token", "*.apiKey", "*.password", "*.answer", "*.value", "headers.authorization"];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination ?? pino.destination(2));
}
