import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ConfigError } from "../../src/ports/errors.js";
import { expandVariables } from "./expand-variables.js";

/** A server Parley starts as a child process and speaks to over stdin/stdout. */
export interface StdioServerConfig {
  type: "stdio";
  command: string;
  args: string[];
  /** The only variables the process gets, besides PATH and HOME. */
  env: Record<string, string>;
  cwd?: string | undefined;
}

/** A server reached over the network: Streamable HTTP (`http`) or the legacy HTTP+SSE transport (`sse`). */
export interface RemoteServerConfig {
  type: "http" | "sse";
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | RemoteServerConfig;

/** Every configured server by its name, in the file's order, with every `${VAR}` expanded. */
export type McpServersConfig = Record<string, McpServerConfig>;

const StringRecordSchema = z.record(z.string(), z.string());

// Unknown fields are ignored rather than refused, so a team can reuse the `.mcp.json` it already has.
const StdioEntrySchema = z.object({
  type: z.literal("stdio").optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: StringRecordSchema.default({}),
  cwd: z.string().min(1).optional(),
});

const RemoteEntrySchema = z.object({
  type: z.enum(["http", "sse"]),
  url: z.string().min(1),
  headers: StringRecordSchema.default({}),
});

const FileSchema = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

/**
 * Parses the text of an `mcpServers` JSON file and expands `${VAR}` / `${VAR:-default}` from `environment` in
 * every string value. Throws one ConfigError listing every problem, each naming the file, the server and the field.
 */
export function parseMcpConfig(
  text: string,
  environment: Readonly<Record<string, string | undefined>>,
  source = "the MCP config",
): McpServersConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const file = FileSchema.safeParse(json);
  if (!file.success) throw new ConfigError(`${source}: expected an object with an "mcpServers" object`);

  const problems: string[] = [];
  const servers: McpServersConfig = {};
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    const where = `${source}: server "${name}"`;
    if (name === "") {
      problems.push(`${source}: a server has an empty name`);
      continue;
    }
    const parsed = parseEntry(entry);
    if (!parsed.ok) {
      problems.push(...parsed.problems.map((problem) => `${where}: ${problem}`));
      continue;
    }
    const expanded = expandEntry(parsed.entry, environment);
    problems.push(...expanded.problems.map((problem) => `${where}: ${problem}`));
    if (expanded.problems.length === 0) servers[name] = expanded.entry;
  }
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  return servers;
}

/** Reads and parses the `mcpServers` file at `path`; see parseMcpConfig. */
export async function loadMcpConfig(path: string, environment: Readonly<Record<string, string | undefined>>): Promise<McpServersConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(`${path}: cannot read the MCP config (${code})`);
  }
  return parseMcpConfig(text, environment, path);
}

type EntryResult = { ok: true; entry: McpServerConfig } | { ok: false; problems: string[] };

function parseEntry(entry: unknown): EntryResult {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return { ok: false, problems: ["expected an object"] };
  const type = (entry as { type?: unknown }).type;
  if (type !== undefined && type !== "stdio" && type !== "http" && type !== "sse") {
    return { ok: false, problems: [`type: expected "stdio", "http" or "sse"`] };
  }
  if (type === "http" || type === "sse") {
    const remote = RemoteEntrySchema.safeParse(entry);
    return remote.success ? { ok: true, entry: remote.data } : { ok: false, problems: describeIssues(remote.error) };
  }
  const stdio = StdioEntrySchema.safeParse(entry);
  if (!stdio.success) return { ok: false, problems: describeIssues(stdio.error) };
  const { cwd, ...rest } = stdio.data;
  return { ok: true, entry: { ...rest, type: "stdio", cwd } };
}

function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "entry"}: ${issue.message}`);
}

function expandEntry(
  entry: McpServerConfig,
  environment: Readonly<Record<string, string | undefined>>,
): { entry: McpServerConfig; problems: string[] } {
  const problems: string[] = [];
  // Values only: names of variables and headers are taken as written.
  const expand = (field: string, text: string): string => {
    const result = expandVariables(text, environment);
    if (result.ok) return result.value;
    problems.push(`${field}: ${result.missing.map((name) => `\${${name}}`).join(", ")} is not set and has no default`);
    return text;
  };
  const expandRecord = (field: string, record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expand(`${field}.${key}`, value)]));

  if (entry.type === "stdio") {
    const expanded: StdioServerConfig = {
      type: "stdio",
      command: expand("command", entry.command),
      args: entry.args.map((argument, index) => expand(`args[${index}]`, argument)),
      env: expandRecord("env", entry.env),
      ...(entry.cwd === undefined ? {} : { cwd: expand("cwd", entry.cwd) }),
    };
    return { entry: expanded, problems };
  }
  const url = expand("url", entry.url);
  if (problems.length === 0 && !isHttpUrl(url)) problems.push("url: expected an http:// or https:// URL");
  return { entry: { type: entry.type, url, headers: expandRecord("headers", entry.headers) }, problems };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
