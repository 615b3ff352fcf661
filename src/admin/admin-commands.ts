import { type AnswerInput, answerFromText } from "../ask/answer.js";
import { describeAnswer } from "../ask/describe.js";
import type { Actor, AnswerOutcome, Engine } from "../engine/engine.js";
import type { Ask, ConversationRef, SessionStore } from "../ports/session-store.js";
import { describeDuration, inert, sessionRow, statusWord, truncate } from "./format.js";
import { type AdminCommand, CONFIG_KEYS, parseCommand, USAGE } from "./parse-command.js";
import { applySetting, CONFIG_FIELDS } from "./runtime-settings.js";

export interface AdminRequest {
  text: string;
  actor: Actor;
  conversation: ConversationRef | null;
}

export interface AdminReply {
  text: string;
}

export const SESSIONS_PAGE_SIZE = 10;
const REFUSAL = "Sorry, `/parley` is for admins only (ADMIN_USER_IDS, workspace admins, or Manage Server). Nothing was changed.";

/** `/parley`: platform-neutral parsing, authorization and handlers. Adapters only carry text in and out. */
export class AdminCommands {
  constructor(
    private readonly engine: Engine,
    private readonly store: SessionStore,
    private readonly clock: () => number = Date.now,
  ) {}

  async run(request: AdminRequest): Promise<AdminReply> {
    const { actor } = request;
    // Authorization rests on the platform's identity of the caller, never on anything a model wrote.
    if (!this.engine.isAdmin(actor)) {
      await this.audit(actor, "admin-refused", truncate(request.text, 100), "refused");
      return { text: REFUSAL };
    }
    const parsed = parseCommand(request.text);
    if (!parsed.ok) {
      await this.audit(actor, "admin-usage-error", truncate(request.text, 100), "usage");
      return { text: parsed.error };
    }
    const { reply, target, outcome } = await this.handle(parsed.command, actor);
    await this.audit(actor, `admin-${parsed.command.name}`, target, outcome);
    return { text: reply };
  }

  private async handle(command: AdminCommand, actor: Actor): Promise<{ reply: string; target: string; outcome: string }> {
    switch (command.name) {
      case "help":
        return {
          reply: ["*Parley admin commands*", ...Object.values(USAGE).map((line) => `• \`${line}\``)].join("\n"),
          target: "-",
          outcome: "ok",
        };
      case "sessions":
        return { reply: await this.sessions(command), target: command.status ?? "all", outcome: "ok" };
      case "show":
        return this.show(command.sessionId);
      case "cancel":
        return this.cancel(command.id, actor);
      case "answer":
        return this.answer(command.askId, command.value, actor);
      case "retry": {
        const session = await this.store.getSession(command.sessionId);
        if (!session) return { reply: `No such session \`${command.sessionId}\`.`, target: command.sessionId, outcome: "unknown" };
        const retried = await this.engine.retry(session.id);
        if (!retried)
          return {
            reply: `Session \`${session.id}\` is ${statusWord(session)}, not failed: nothing to retry.`,
            target: session.id,
            outcome: "not-failed",
          };
        return { reply: `Retrying session \`${session.id}\` from its last message.`, target: session.id, outcome: "retried" };
      }
      case "stats":
        return { reply: await this.stats(), target: "-", outcome: "ok" };
      case "config":
        return this.config(command.key, command.value);
      case "purge": {
        const counts = await this.store.purgeEnded(this.clock() - command.olderThanDays * 86_400_000);
        return {
          reply: `Purged ${counts.sessions} ended sessions older than ${command.olderThanDays} days: ${counts.messages} messages and ${counts.asks} asks. Pending and running sessions were not touched.`,
          target: `${command.olderThanDays}d`,
          outcome: `${counts.sessions} sessions`,
        };
      }
    }
  }

  private async sessions(command: Extract<AdminCommand, { name: "sessions" }>): Promise<string> {
    const sessions = await this.store.listSessions({
      ...(command.status ? { status: command.status } : {}),
      ...(command.channel ? { channel: command.channel } : {}),
      ...(command.user ? { ownerId: command.user } : {}),
      limit: SESSIONS_PAGE_SIZE + 1,
      offset: (command.page - 1) * SESSIONS_PAGE_SIZE,
    });
    const label = command.status === null ? "" : `${command.status === "waiting" ? "pending" : command.status} `;
    if (sessions.length === 0) return command.page > 1 ? `No more ${label}sessions.` : `No ${label}sessions.`;
    const now = this.clock();
    const rows = await Promise.all(
      sessions
        .slice(0, SESSIONS_PAGE_SIZE)
        .map(async (session) =>
          sessionRow(session, session.status === "waiting" ? await this.store.pendingAsk(session.id) : undefined, now),
        ),
    );
    const more =
      sessions.length > SESSIONS_PAGE_SIZE
        ? `\nMore: \`/parley sessions ${command.status === null ? "all" : label.trim()} --page ${command.page + 1}\``
        : "";
    return `*${capitalize(`${label}sessions`)}, newest first (page ${command.page})*\n${rows.join("\n")}${more}`;
  }

  private async show(sessionId: string) {
    const session = await this.store.getSession(sessionId);
    if (!session) return { reply: `No such session \`${sessionId}\`.`, target: sessionId, outcome: "unknown" };
    const asks = await this.store.listAsks(session.id);
    const now = this.clock();
    const { usage } = session;
    const lines = [
      `*Session \`${session.id}\`*`,
      sessionRow(session, undefined, now),
      `Turns: ${session.turnCount} · last outcome: ${session.lastOutcome ?? "none"}${session.lastError ? ` · last error: ${inert(truncate(session.lastError, 300))}` : ""}`,
      `Tokens: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.cacheReadTokens} cache read, ${usage.cacheWriteTokens} cache write`,
      asks.length > 0 ? "*Asks*" : "No asks yet.",
      ...asks.map((ask) => askLine(ask, now)),
    ];
    return { reply: lines.join("\n"), target: session.id, outcome: "ok" };
  }

  private async cancel(id: string, actor: Actor) {
    const ask = await this.store.getAsk(id);
    if (ask) {
      const outcome = await this.engine.cancel(ask.id, actor);
      return {
        reply: describeOutcome(outcome, `Cancelled ask \`${ask.id}\`; the model was told it was cancelled.`),
        target: ask.id,
        outcome: outcome.kind,
      };
    }
    const session = await this.store.getSession(id);
    if (!session) return { reply: `No such session or ask \`${id}\`.`, target: id, outcome: "unknown" };
    const stop = await this.engine.stop(session.id, actor);
    const reply =
      stop === "stopped"
        ? `Cancelled session \`${session.id}\`: its pending ask was cancelled and the turn ended.`
        : stop === "stopping"
          ? `Session \`${session.id}\` is running; it stops at its next step.`
          : `Session \`${session.id}\` has no turn to cancel (${statusWord(session)}).`;
    return { reply, target: session.id, outcome: stop };
  }

  private async answer(askId: string, value: string, actor: Actor) {
    const found = await this.engine.getAsk(askId);
    if (!found) return { reply: `No such ask \`${askId}\`.`, target: askId, outcome: "unknown" };
    const input = toAnswerInput(found.ask, value);
    if ("error" in input) return { reply: input.error, target: askId, outcome: "invalid" };
    const outcome = await this.engine.answer(askId, actor, input);
    return {
      reply: describeOutcome(outcome, `Answered ask \`${askId}\` on behalf of <@${found.session.ownerId}>.`),
      target: askId,
      outcome: outcome.kind,
    };
  }

  private async stats(): Promise<string> {
    const stats = await this.store.stats();
    const sessions = stats.sessionsByStatus;
    const asks = stats.asksByStatus;
    return [
      "*Parley stats*",
      `Sessions: ${sessions.waiting} pending, ${sessions.running} running, ${sessions.idle} idle, ${sessions.failed} failed`,
      `Asks: ${asks.pending} pending, ${asks.answered} answered, ${asks.cancelled} cancelled, ${asks.expired} expired`,
      `Median time to answer: ${stats.medianAnswerMs === null ? "n/a" : describeDuration(stats.medianAnswerMs)}`,
      `Tokens: ${stats.usage.inputTokens} in, ${stats.usage.outputTokens} out, ${stats.usage.cacheReadTokens} cache read, ${stats.usage.cacheWriteTokens} cache write`,
      `Database: ${(stats.databaseBytes / 1024 / 1024).toFixed(2)} MiB`,
    ].join("\n");
  }

  private async config(key?: keyof typeof CONFIG_FIELDS, value?: string) {
    const settings = this.engine.settings;
    if (!key) {
      const lines = CONFIG_KEYS.map((name) => `• \`${name}\` = ${String(settings[CONFIG_FIELDS[name]])}`);
      return { reply: `*Runtime settings*\n${lines.join("\n")}`, target: "-", outcome: "ok" };
    }
    if (value === undefined) return { reply: `\`${key}\` = ${String(settings[CONFIG_FIELDS[key]])}`, target: key, outcome: "ok" };
    const applied = applySetting(settings, key, value);
    if (!applied.ok) return { reply: `${applied.error}. Nothing was changed. Usage: ${USAGE.config}`, target: key, outcome: "invalid" };
    await this.store.saveSetting(key, value);
    this.engine.settings = applied.settings;
    return {
      reply: `\`${key}\` is now ${value}. It applies from the next step and survives restarts.`,
      target: key,
      outcome: `set ${value}`,
    };
  }

  private async audit(actor: Actor, action: string, target: string, outcome: string): Promise<void> {
    await this.store.audit({ actor: actor.id, action, target, outcome, at: this.clock() });
  }
}

function askLine(ask: Ask, now: number): string {
  const answer = ask.answer ? ` → ${inert(describeAnswer(ask.spec, ask.answer.value, ask.answer.other))}` : "";
  const who = ask.answeredBy ? ` by <@${ask.answeredBy}>` : "";
  const left = ask.status === "pending" ? ` (${describeDuration(ask.deadline - now)} left)` : "";
  return `• \`${ask.id}\` ${ask.spec.type} “${inert(truncate(ask.spec.question, 80))}”: ${ask.status}${answer}${who}${left}`;
}

function toAnswerInput(ask: Ask, value: string): AnswerInput | { error: string } {
  if (ask.spec.type !== "form") return answerFromText(ask.spec, value);
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    const values: Record<string, string | boolean> = {};
    for (const [name, field] of Object.entries(parsed)) if (typeof field === "string" || typeof field === "boolean") values[name] = field;
    for (const [name, field] of Object.entries(parsed)) if (typeof field === "number") values[name] = String(field);
    return { kind: "form", values };
  } catch {
    const example = Object.fromEntries(ask.spec.fields.map((field) => [field.name, field.type === "toggle" ? true : "…"]));
    return { error: `This ask is a form: give its fields as JSON, for example ${JSON.stringify(example)}.` };
  }
}

function describeOutcome(outcome: AnswerOutcome, success: string): string {
  switch (outcome.kind) {
    case "accepted":
      return success;
    case "invalid":
      return `Not accepted: ${outcome.message}`;
    case "already-ended":
      return `That ask already ended (${outcome.status}); nothing was changed.`;
    case "not-allowed":
      return outcome.message;
    case "unknown-ask":
      return "No such ask.";
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
