import { createHash } from "node:crypto";

/** What the Messages API accepts as a tool name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

/** One server's tool, before it gets the name the model sees. */
export interface ToolAddress {
  server: string;
  tool: string;
}

/**
 * The names the model sees, `<server>__<tool>`, in the order of `addresses`: other characters become `_`, and a
 * name that is too long or taken keeps a prefix plus a short hash of the full address, so it stays unique and
 * the same from one start to the next. Names that fit as written are placed first, so they are never the ones
 * bent by a collision.
 */
export function assignToolNames(addresses: readonly ToolAddress[]): string[] {
  const names = new Array<string>(addresses.length);
  const taken = new Set<string>();
  const order = addresses
    .map((address, index) => ({ address, index, raw: `${address.server}__${address.tool}` }))
    .sort((left, right) => Number(!TOOL_NAME_PATTERN.test(left.raw)) - Number(!TOOL_NAME_PATTERN.test(right.raw)));
  for (const { raw, index } of order) {
    const cleaned = raw.replace(/[^a-zA-Z0-9_-]/g, "_");
    let name = cleaned.length <= MAX_NAME_LENGTH ? cleaned : withHash(cleaned, raw);
    if (taken.has(name)) name = withHash(cleaned, raw);
    for (let attempt = 1; taken.has(name); attempt += 1) name = withHash(cleaned, `${raw}#${attempt}`);
    taken.add(name);
    names[index] = name;
  }
  return names;
}

function withHash(cleaned: string, seed: string): string {
  const hash = createHash("sha256").update(seed).digest("hex").slice(0, HASH_LENGTH);
  return `${cleaned.slice(0, MAX_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`;
}
