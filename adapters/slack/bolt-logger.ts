import { type Logger as BoltLogger, LogLevel } from "@slack/bolt";
import type { Logger } from "../../src/ports/logger.js";

const MAX_LINE_CHARS = 300;

/**
 * Bolt's logger interface on top of ours. Debug and info lines are dropped: the Web API client writes
 * request bodies at debug level, and those carry answers. So is any line `skip` says the caller reports itself.
 */
export function createBoltLogger(logger: Logger, skip: (line: string) => boolean = () => false): BoltLogger {
  const line = (parts: unknown[]) =>
    parts
      .map((part) => (part instanceof Error ? `${part.name}: ${part.message}` : typeof part === "string" ? part : ""))
      .join(" ")
      .slice(0, MAX_LINE_CHARS);
  return {
    debug() {},
    info() {},
    warn: (...parts: unknown[]) => {
      const text = line(parts);
      if (!skip(text)) logger.warn({ source: "bolt" }, text);
    },
    error: (...parts: unknown[]) => {
      const text = line(parts);
      if (!skip(text)) logger.error({ source: "bolt" }, text);
    },
    setLevel() {},
    getLevel: () => LogLevel.WARN,
    setName() {},
  };
}
