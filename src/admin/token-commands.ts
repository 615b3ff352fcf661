import { hashSecret, newSecret, TOKEN_NAME } from "../api/api-tokens.js";
import type { ApiStore } from "../ports/api-store.js";
import type { Actor } from "../ports/conversation.js";
import { code, joinRich, mention, type RichText, rich } from "../ports/rich-text.js";

export type TokenCommand = { action: "list" } | { action: "create" | "revoke"; tokenName: string };

export interface TokenCommandsDependencies {
  store: ApiStore;
  /** Names from API_TOKENS: listed, and not creatable or revocable here (the environment owns them). */
  envTokenNames: readonly string[];
  clock: () => number;
}

interface Handled {
  reply: RichText;
  target: string;
  outcome: string;
}

/** Parses `tokens [create <name>|revoke <name>]`; undefined when the words do not fit. */
export function parseTokenCommand(words: readonly string[]): TokenCommand | undefined {
  if (words.length === 0) return { action: "list" };
  const [action, name] = words;
  if ((action === "create" || action === "revoke") && words.length === 2 && name !== undefined && TOKEN_NAME.test(name))
    return { action, tokenName: name };
  return undefined;
}

/**
 * `/parley tokens`: the API's tokens. A new secret is shown once, in the admin's private reply, and only its
 * SHA-256 is stored; the audit trail names the token, never the secret.
 */
export async function runTokenCommand(command: TokenCommand, actor: Actor, deps: TokenCommandsDependencies): Promise<Handled> {
  const { store, envTokenNames, clock } = deps;
  if (command.action === "list") return { reply: await listTokens(deps), target: "-", outcome: "ok" };
  const name = command.tokenName;
  if (envTokenNames.includes(name))
    return { reply: rich`Token ${code(name)} comes from API_TOKENS: change it there.`, target: name, outcome: "from-environment" };
  if (command.action === "revoke") {
    const revoked = await store.revokeToken(name, clock());
    return revoked
      ? { reply: rich`Token ${code(name)} revoked: its calls now get 401, and its callbacks stop.`, target: name, outcome: "revoked" }
      : { reply: rich`No live token named ${code(name)}.`, target: name, outcome: "unknown" };
  }
  const secret = newSecret();
  const saved = await store.saveToken({ name, secretHash: hashSecret(secret), createdBy: actor.id, createdAt: clock(), revokedAt: null });
  // A revoked token's name is not reused: its asks and callbacks belong to that name, and must stay out of reach.
  if (!saved) return { reply: rich`A token named ${code(name)} exists or existed: pick another name.`, target: name, outcome: "exists" };
  return {
    reply: rich`Token ${code(name)} created. Its secret, shown this once: ${code(secret)}\nSend it as ${code("Authorization: Bearer <secret>")} to /v1/asks or /mcp (docs/api.md).`,
    target: name,
    outcome: "created",
  };
}

async function listTokens(deps: TokenCommandsDependencies): Promise<RichText> {
  const stored = await deps.store.listTokens();
  if (stored.length === 0 && deps.envTokenNames.length === 0) return ["No API tokens. Create one with /parley tokens create <name>."];
  const lines = [
    ...deps.envTokenNames.map((name) => rich`• ${code(name)} · from API_TOKENS`),
    ...stored.map((token) => {
      const state = token.revokedAt === null ? "live" : `revoked ${new Date(token.revokedAt).toISOString().slice(0, 16)}`;
      return rich`• ${code(token.name)} · ${state} · created ${new Date(token.createdAt).toISOString().slice(0, 16)} by ${mention(token.createdBy)}`;
    }),
  ];
  return joinRich([["API tokens"], ...lines]);
}
