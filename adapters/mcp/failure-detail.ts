import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServerConfig } from "./mcp-config.js";

const MAX_DETAIL_LENGTH = 200;
const MIN_SECRET_PART_LENGTH = 6;

/**
 * What an operator may see of a server's configuration in an error: header and env values are secrets, and so
 * is each long word of them (the token of `Bearer <token>`), since an error message may quote either.
 */
export function secretsOf(config: McpServerConfig): string[] {
  const values = config.type === "stdio" ? Object.values(config.env) : Object.values(config.headers);
  const parts = values.flatMap((value) => value.split(/\s+/).filter((part) => part.length >= MIN_SECRET_PART_LENGTH));
  // Longest first, so a whole value is blanked before one of its parts.
  return [...new Set([...values, ...parts])].filter((secret) => secret.length > 0).sort((left, right) => right.length - left.length);
}

/** An error as one short line for status and logs, with every secret blanked out. */
export function failureDetail(error: unknown, secrets: readonly string[]): string {
  let text = error instanceof Error ? error.message : String(error);
  // The SDK keeps the HTTP status out of its message; an operator needs it (401 is not 503).
  if ((error instanceof StreamableHTTPError || error instanceof SseError) && error.code !== undefined) text = `HTTP ${error.code}: ${text}`;
  text = blankSecrets(text, secrets);
  text = text.replace(/\s+/g, " ").trim() || "unknown error";
  return text.length > MAX_DETAIL_LENGTH ? `${text.slice(0, MAX_DETAIL_LENGTH - 1)}…` : text;
}

/** The text with every secret replaced by `[redacted]`. */
export function blankSecrets(text: string, secrets: readonly string[]): string {
  let blanked = text;
  for (const secret of secrets) blanked = blanked.split(secret).join("[redacted]");
  return blanked;
}
