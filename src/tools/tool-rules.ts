import { type PolicyRule, parsePolicyRules, withRule } from "./tool-policy.js";

/** The settings key that keeps admins' policy rules across restarts, in TOOL_POLICY's own format. */
export const TOOL_POLICY_SETTING = "tool-policy";

/** Policy rules in force: an admin's (`/parley tools policy`, stored) first, then TOOL_POLICY's. */
export class ToolRules {
  private admin: PolicyRule[];

  constructor(
    private readonly configured: readonly PolicyRule[],
    stored: string | undefined,
  ) {
    const parsed = stored ? parsePolicyRules(stored) : { ok: true as const, rules: [] };
    // A stored value this version cannot read is ignored rather than guessed at; the admin can set it again.
    this.admin = parsed.ok ? parsed.rules : [];
  }

  /** All rules, first match wins. */
  get(): PolicyRule[] {
    return [...this.admin, ...this.configured];
  }

  /** Adds an admin's rule ahead of the others and returns the stored form of the admin rules. */
  set(rule: PolicyRule): string {
    this.admin = withRule(this.admin, rule);
    return this.admin.map((entry) => `${entry.pattern}=${entry.policy}`).join(",");
  }
}
