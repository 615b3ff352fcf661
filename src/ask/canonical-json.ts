import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth and no spaces: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, sortKeys(record[key])]),
  );
}

/** SHA-256 (hex) of the canonical JSON of a tool call's arguments: what an approval is bound to. */
export function argumentsHash(input: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(input ?? {}))
    .digest("hex");
}
