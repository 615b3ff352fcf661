import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/sdk/client/stdio.js";

/** Variables a server's process gets from Parley's own environment, besides those its entry names. */
const PASSED_VARIABLES = ["PATH", "HOME"] as const;

/**
 * The environment of a stdio server's process: exactly the variables its entry names, plus PATH and HOME.
 * The SDK merges a default set (USER, SHELL, TERM…) under ours; those are set to `undefined`, which Node's
 * spawn leaves out, so they do not leak in.
 */
export function serverEnvironment(
  named: Readonly<Record<string, string>>,
  parent: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const environment: Record<string, string | undefined> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) environment[name] = undefined;
  for (const name of PASSED_VARIABLES) if (parent[name] !== undefined) environment[name] = parent[name];
  Object.assign(environment, named);
  // The SDK's type says string values; undefined is how a variable is removed (see above).
  return environment as Record<string, string>;
}
