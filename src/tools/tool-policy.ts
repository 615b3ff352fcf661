import type { ToolHints } from "../ports/tool-provider.js";

/** auto runs; ask runs only after a person approves the exact call; deny is never offered to the model. */
export const TOOL_POLICIES = ["auto", "ask", "deny"] as const;
export type ToolPolicy = (typeof TOOL_POLICIES)[number];

export interface PolicyRule {
  /** Matched against the exposed name; `*` matches any run of characters. */
  pattern: string;
  policy: ToolPolicy;
}

export interface PolicyDecision {
  policy: ToolPolicy;
  /** Why: the rule that matched, or the server's annotation. */
  source: string;
}

const PATTERN = /^[A-Za-z0-9_*-]{1,80}$/;

/** Parses `pattern=policy,…` (TOOL_POLICY, DESIGN §11); the error names the bad pair. */
export function parsePolicyRules(text: string): { ok: true; rules: PolicyRule[] } | { ok: false; error: string } {
  const rules: PolicyRule[] = [];
  for (const pair of text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)) {
    const [pattern = "", policy = "", ...rest] = pair.split("=").map((part) => part.trim());
    if (rest.length > 0 || !PATTERN.test(pattern))
      return { ok: false, error: `"${pair}": expected pattern=auto|ask|deny, pattern of letters, digits, _ - and *` };
    if (!isPolicy(policy)) return { ok: false, error: `"${pair}": the policy must be auto, ask or deny` };
    rules.push({ pattern, policy });
  }
  return { ok: true, rules };
}

export function isPolicy(value: string): value is ToolPolicy {
  return (TOOL_POLICIES as readonly string[]).includes(value);
}

export function isPolicyPattern(value: string): boolean {
  return PATTERN.test(value);
}

/** `*` is the only wildcard; everything else matches itself. */
export function matchesPattern(pattern: string, name: string): boolean {
  const parts = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`).test(name);
}

/**
 * Rules in order, first match wins; with none, a tool the server marks read-only runs, anything else asks.
 * The hints are the server's claims: they can relax a default, never override a rule.
 */
export function decidePolicy(name: string, hints: ToolHints, rules: readonly PolicyRule[]): PolicyDecision {
  const rule = rules.find((candidate) => matchesPattern(candidate.pattern, name));
  if (rule) return { policy: rule.policy, source: `rule ${rule.pattern}=${rule.policy}` };
  return hints.readOnly === true ? { policy: "auto", source: "read-only tool" } : { policy: "ask", source: "may change things" };
}

/** An admin's rule goes first, replacing an earlier rule for the same pattern. */
export function withRule(rules: readonly PolicyRule[], rule: PolicyRule): PolicyRule[] {
  return [rule, ...rules.filter((existing) => existing.pattern !== rule.pattern)];
}
