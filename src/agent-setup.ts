import { existsSync, readFileSync } from "node:fs";
import type { Config } from "./config.js";
import { ConfigError } from "./ports/errors.js";

/** The mcpServers file to load: MCP_CONFIG, else ./mcp.json when it exists, else none (DESIGN §11). */
export function mcpConfigPath(config: Pick<Config, "MCP_CONFIG">, exists: (path: string) => boolean = existsSync): string | undefined {
  if (config.MCP_CONFIG) {
    if (!exists(config.MCP_CONFIG)) throw new ConfigError(`invalid configuration:\n  MCP_CONFIG: no file at ${config.MCP_CONFIG}`);
    return config.MCP_CONFIG;
  }
  return exists("./mcp.json") ? "./mcp.json" : undefined;
}

/** The team's own instructions: SYSTEM_PROMPT, then the contents of SYSTEM_PROMPT_FILE. */
export function teamInstructions(config: Pick<Config, "SYSTEM_PROMPT" | "SYSTEM_PROMPT_FILE">): string | undefined {
  const parts: string[] = [];
  if (config.SYSTEM_PROMPT) parts.push(config.SYSTEM_PROMPT);
  if (config.SYSTEM_PROMPT_FILE) {
    try {
      parts.push(readFileSync(config.SYSTEM_PROMPT_FILE, "utf8"));
    } catch (error) {
      const reason = (error as { code?: string }).code === "ENOENT" ? "no such file" : "it cannot be read";
      throw new ConfigError(`invalid configuration:\n  SYSTEM_PROMPT_FILE: ${config.SYSTEM_PROMPT_FILE}: ${reason}`);
    }
  }
  const text = parts.join("\n\n").trim();
  return text.length > 0 ? text : undefined;
}
