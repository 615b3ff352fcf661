/** `${NAME}` or `${NAME:-default}`, as in Claude Code's `.mcp.json` and the shell. */
const VARIABLE_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The expanded string, or the names of the variables that are unset and have no default. */
export type ExpansionResult = { ok: true; value: string } | { ok: false; missing: string[] };

/**
 * Expands `${NAME}` and `${NAME:-default}` from `environment`. Like the shell's `:-`, the default also
 * applies when the variable is set but empty. The expansion is not recursive: a value containing `${…}`
 * is kept as it is.
 */
export function expandVariables(text: string, environment: Readonly<Record<string, string | undefined>>): ExpansionResult {
  const missing: string[] = [];
  const value = text.replace(VARIABLE_PATTERN, (whole, name: string, fallback: string | undefined) => {
    const found = environment[name];
    if (found !== undefined && found !== "") return found;
    if (fallback !== undefined) return fallback;
    // Set but empty, without default: the empty string is what the person wrote.
    if (found === "") return "";
    missing.push(name);
    return whole;
  });
  return missing.length > 0 ? { ok: false, missing: [...new Set(missing)] } : { ok: true, value };
}
