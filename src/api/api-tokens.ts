import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A token as the API checks it: its name and the hex SHA-256 of its secret (the secret itself is never kept). */
export interface TokenHash {
  name: string;
  secretHash: string;
}

/** The owner of a session the API opened, and the actor of its calls in the audit trail: `api:<token name>`. */
export const API_OWNER_PREFIX = "api:";

/** Token names as admins type them and as the audit trail shows them. */
export const TOKEN_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A new secret: 32 random bytes, with a prefix that says what it is when it turns up in a paste. */
export function newSecret(): string {
  return `parley_${randomBytes(32).toString("base64url")}`;
}

/**
 * The token whose secret this is. Every token's hash is compared, in constant time, so how long the check takes
 * says nothing about which token came close.
 */
export function matchToken(secret: string, tokens: readonly TokenHash[]): string | undefined {
  const presented = Buffer.from(hashSecret(secret), "hex");
  let found: string | undefined;
  for (const token of tokens) {
    const stored = Buffer.from(token.secretHash, "hex");
    if (stored.length === presented.length && timingSafeEqual(stored, presented) && found === undefined) found = token.name;
  }
  return found;
}

/** `API_TOKENS` (`name:secret,…`) as name and hash; the config schema has checked the shape already. */
export function parseApiTokens(text: string | undefined): TokenHash[] {
  if (!text) return [];
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const colon = entry.indexOf(":");
      return { name: entry.slice(0, colon).trim(), secretHash: hashSecret(entry.slice(colon + 1).trim()) };
    });
}

/** What is wrong with an `API_TOKENS` value, said without repeating any secret in it. */
export function apiTokensProblem(text: string): string | undefined {
  const names = new Set<string>();
  for (const [index, entry] of text.split(",").entries()) {
    if (entry.trim() === "") continue;
    const colon = entry.indexOf(":");
    const name = colon < 0 ? "" : entry.slice(0, colon).trim();
    if (!TOKEN_NAME.test(name)) return `entry ${index + 1} must be name:secret, the name lowercase letters, digits, - or _`;
    if (entry.slice(colon + 1).trim().length < 16) return `the secret of ${name} must be at least 16 characters`;
    if (names.has(name)) return `the name ${name} appears twice`;
    names.add(name);
  }
  return undefined;
}
