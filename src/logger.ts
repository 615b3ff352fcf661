import { pino } from "pino";

import type { Logger } from "./ports/logger.js";

export { type Logger, SILENT_LOGGER } from "./ports/logger.js";

/** Paths pino blanks out wherever they appear: tokens and answers never reach the log. */
export const REDACTED_PATHS = ["*.token", "*.apiKey", "*.password", "*.answer", "*.value", "headers.authorization"];

export function createLogger(level: string, destination?: NodeJS.WritableStream | pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination ?? pino.destination(2));
}

/**
 * Logs appended to a file, its folder created; opened at once, so a path that cannot be written throws here.
 * For the terminal, where JSON lines on stderr would mix into the conversation on screen.
 */
export function createFileLogger(level: string, path: string): Logger {
  return createLogger(level, pino.destination({ dest: path, mkdir: true, sync: true }));
}
