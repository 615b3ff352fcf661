import { parseAskId, parseSessionId } from "../ports/ids.js";
import type { SessionStatus } from "../ports/session-store.js";
import { isPolicy, isPolicyPattern, type PolicyRule } from "../tools/tool-policy.js";
import { parseTokenCommand, type TokenCommand } from "./token-commands.js";

export const CONFIG_KEYS = ["ask-budget", "ask-timeout", "answer-policy", "max-iterations"] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

export type AdminCommand =
  | { name: "sessions"; status: SessionStatus | null; channel?: string; user?: string; page: number }
  | { name: "show"; sessionId: string }
  | { name: "cancel"; id: string }
  | { name: "answer"; askId: string; value: string }
  | { name: "retry"; sessionId: string }
  | { name: "stats" }
  | { name: "config"; key?: ConfigKey; value?: string | undefined }
  | { name: "purge"; olderThanDays: number }
  | { name: "tools"; rule?: PolicyRule }
  | { name: "tokens"; command: TokenCommand }
  | { name: "help" };

export type ParseResult = { ok: true; command: AdminCommand } | { ok: false; error: string };

export const USAGE: Record<AdminCommand["name"], string> = {
  sessions: "/parley sessions [pending|running|failed|all] [--channel C] [--user U] [--page N]",
  show: "/parley show <session>",
  cancel: "/parley cancel <session|ask>",
  answer: "/parley answer <ask> <value>",
  retry: "/parley retry <session>",
  stats: "/parley stats",
  config: `/parley config [${CONFIG_KEYS.join("|")}] [value]`,
  purge: "/parley purge --older-than <days>",
  tools: "/parley tools [policy <pattern> <auto|ask|deny>]",
  tokens: "/parley tokens [create <name>|revoke <name>]",
  help: "/parley help",
};

const STATUS_WORDS: Record<string, SessionStatus | null> = {
  pending: "waiting",
  waiting: "waiting",
  running: "running",
  failed: "failed",
  all: null,
};
const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What an id typed after `/parley cancel` names, told by its shape; undefined when it is neither an ask nor a session id. */
export function idKind(id: string): "ask" | "session" | undefined {
  if (parseAskId(id)) return "ask";
  if (parseSessionId(id)) return "session";
  return undefined;
}

function usage(name: AdminCommand["name"], problem?: string): ParseResult {
  return { ok: false, error: `${problem ? `${problem}. ` : ""}Usage: ${USAGE[name]}` };
}

/** Parses the text after `/parley`. Never throws: a bad command gets its usage line. */
export function parseCommand(text: string): ParseResult {
  const trimmed = text.trim();
  const [head = "help", ...rest] = trimmed.split(/\s+/).filter((word) => word.length > 0);
  const name = head.toLowerCase();
  switch (name) {
    case "help":
      return { ok: true, command: { name: "help" } };
    case "stats":
      return rest.length === 0 ? { ok: true, command: { name: "stats" } } : usage("stats", "stats takes no arguments");
    case "sessions":
      return parseSessions(rest);
    case "show":
    case "retry":
      return rest.length === 1 && ID.test(rest[0]!)
        ? { ok: true, command: { name, sessionId: rest[0]! } }
        : usage(name, "Give one session id");
    case "cancel":
      return rest.length === 1 && ID.test(rest[0]!)
        ? { ok: true, command: { name, id: rest[0]! } }
        : usage(name, "Give one session or ask id");
    case "answer": {
      const [askId, ...valueWords] = rest;
      if (!askId || !ID.test(askId) || valueWords.length === 0) return usage("answer", "Give an ask id and a value");
      // The value is the rest of the line as typed, spaces included.
      const value = trimmed.slice(trimmed.indexOf(askId) + askId.length).trim();
      return { ok: true, command: { name: "answer", askId, value } };
    }
    case "config": {
      if (rest.length === 0) return { ok: true, command: { name: "config" } };
      const key = rest[0]!.toLowerCase();
      if (!(CONFIG_KEYS as readonly string[]).includes(key)) return usage("config", `Unknown setting "${rest[0]!.slice(0, 40)}"`);
      if (rest.length > 2) return usage("config", "Give one value");
      return { ok: true, command: { name: "config", key: key as ConfigKey, value: rest[1] } };
    }
    case "purge": {
      if (rest.length !== 2 || rest[0] !== "--older-than") return usage("purge");
      const days = Number(rest[1]);
      if (!Number.isInteger(days) || days < 1 || days > 36500) return usage("purge", "Days must be a whole number from 1");
      return { ok: true, command: { name: "purge", olderThanDays: days } };
    }
    case "tools": {
      if (rest.length === 0) return { ok: true, command: { name: "tools" } };
      const [word, pattern = "", policy = ""] = rest;
      if (word !== "policy" || rest.length !== 3) return usage("tools");
      if (!isPolicyPattern(pattern)) return usage("tools", "A pattern is letters, digits, _ - and * (for example files__*)");
      if (!isPolicy(policy)) return usage("tools", "The policy is auto, ask or deny");
      return { ok: true, command: { name: "tools", rule: { pattern, policy } } };
    }
    case "tokens": {
      const command = parseTokenCommand(rest);
      return command ? { ok: true, command: { name: "tokens", command } } : usage("tokens", "A name is lowercase letters, digits, - and _");
    }
    default:
      return { ok: false, error: `Unknown command "${head.slice(0, 40)}". Try /parley help.` };
  }
}

function parseSessions(words: string[]): ParseResult {
  let status: SessionStatus | null = "waiting";
  const command: Extract<AdminCommand, { name: "sessions" }> = { name: "sessions", status, page: 1 };
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    const next = words[index + 1];
    if (word in STATUS_WORDS && index === 0) {
      status = STATUS_WORDS[word] ?? null;
    } else if ((word === "--channel" || word === "--user") && next && ID.test(stripMention(next))) {
      command[word === "--channel" ? "channel" : "user"] = stripMention(next);
      index++;
    } else if (word === "--page" && next && /^\d{1,4}$/.test(next) && Number(next) >= 1) {
      command.page = Number(next);
      index++;
    } else {
      return usage("sessions", `Did not understand "${word.slice(0, 40)}"`);
    }
  }
  return { ok: true, command: { ...command, status } };
}

/** Accepts `<#C123|name>`, `<@U123>` and `#C123` as typed in Slack or Discord. */
function stripMention(word: string): string {
  return word
    .replace(/^<[#@]!?/, "")
    .replace(/(\|[^>]*)?>$/, "")
    .replace(/^#/, "");
}
