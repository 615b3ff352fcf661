/** The slice of a structured logger the core and adapters use (pino in production), so tests can capture logs. */
export interface Logger {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export const SILENT_LOGGER: Logger = { debug() {}, info() {}, warn() {}, error() {} };
