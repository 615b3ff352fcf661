import { pino } from "pino";

/** The slice of pino the core uses, so tests can capture logs. */
export interface Logger {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** Paths pino blanks out wherever they appear: tokens and answers never reach the log. */
export const REDACTED_PATHS = ["*.token", "*.apiKey", "*.password", "*.answer", "*.value", "headers.authorization"];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination ?? pino.destination(2));
}

export const SILENT_LOGGER: Logger = { debug() {}, info() {}, warn() {}, error() {} };
