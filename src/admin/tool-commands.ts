import type { AdminQueries } from "../ports/maintenance-store.js";
import { bold, code, joinRich, type RichText, rich, untrusted } from "../ports/rich-text.js";
import type { ToolCatalog } from "../tools/tool-catalog.js";
import { matchesPattern, type PolicyRule } from "../tools/tool-policy.js";
import { TOOL_POLICY_SETTING, type ToolRules } from "../tools/tool-rules.js";
import { oneLine } from "./format.js";
import { USAGE } from "./parse-command.js";

/** `/parley tools`: each MCP server and its state, each tool with its policy and where the policy comes from. */
export function listTools(catalog: ToolCatalog): RichText {
  const servers = catalog.servers().map((server) => {
    const detail = server.detail ? rich` · ${untrusted(oneLine(server.detail, 200))}` : [];
    return rich`• ${code(server.name)}: ${server.state} · ${String(server.toolCount)} tools${detail}`;
  });
  const tools = catalog
    .list()
    .map((tool) => rich`• ${code(tool.definition.name)} ${tool.policy.policy} (${tool.policy.source}) · ${tool.origin}`);
  return joinRich([
    [bold("MCP servers")],
    ...(servers.length > 0 ? servers : [["No MCP servers configured (MCP_CONFIG, or ./mcp.json)."]]),
    [bold("Tools")],
    ...(tools.length > 0 ? tools : [["No tools."]]),
    rich`Change one: ${code(USAGE.tools)}`,
  ]);
}

/** `/parley tools policy <pattern> <policy>`: stored, so it survives restarts, and in force from the next step. */
export async function setToolPolicy(
  rule: PolicyRule,
  deps: { catalog: ToolCatalog; toolRules: ToolRules | undefined; store: Pick<AdminQueries, "saveSetting"> },
): Promise<{ reply: RichText; target: string; outcome: string }> {
  const target = `${rule.pattern}=${rule.policy}`;
  if (!deps.toolRules) return { reply: ["Tool policies cannot be changed here."], target, outcome: "unavailable" };
  await deps.store.saveSetting(TOOL_POLICY_SETTING, deps.toolRules.set(rule));
  const matched = deps.catalog.list().filter((tool) => matchesPattern(rule.pattern, tool.definition.name)).length;
  return {
    reply: rich`Tools matching ${code(rule.pattern)} are now ${bold(rule.policy)} (${String(matched)} now). It applies from the next step and survives restarts.`,
    target,
    outcome: "set",
  };
}
