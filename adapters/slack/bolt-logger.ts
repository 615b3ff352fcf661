import { type Logger as BoltLogger, LogLevel } from "@slack/bolt";
import type { Logger } from "../../src/ports/logger.js";

const MAX_LINE_CHARS = 300;

/**
 * Bolt's logger interface on top of ours. Debug and info lines are dropped: the Web API client writes
 * request bodies at debug level, and those carry answers.
 */
export function createBoltLogger(logger: Logger): BoltLogger {
  const line = (parts: unknown[]) =>
    parts
      .map((part) => (part instanceof Error ? `${part.name}: ${part.message}` : typeof part === "string" ? part : ""))
      .join(" ")
      .slice(0, MAX_LINE_CHARS);
  return {
    debug() {},
    info() {},
    warn: (...parts: unknown[]) => logger.warn({ source: "bolt" }, line(parts)),
    error: (...parts: unknown[]) => logger.error({ source: "bolt" }, line(parts)),
    setLevel() {},
    getLevel: () => LogLevel.WARN,
    setName() {},
  };
}
