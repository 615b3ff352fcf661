import { type AnswerInput, answerFromText } from "../ask/answer.js";
import { typedDecision } from "../ask/approval.js";
import { describeAnswer } from "../ask/describe.js";
import type { Engine } from "../engine/engine.js";
import type { RuntimeSettings } from "../engine/settings.js";
import type { ApiStore } from "../ports/api-store.js";
import type { Actor, AdminReply, AdminRequest, AnswerOutcome } from "../ports/conversation.js";
import type { AdminQueries } from "../ports/maintenance-store.js";
import { answerNotice } from "../ports/notices.js";
import { bold, code, joinRich, mention, type RichText, rich, untrusted } from "../ports/rich-text.js";
import type { Ask, SessionStore } from "../ports/session-store.js";
import type { ToolRules } from "../tools/tool-rules.js";
import { describeDuration, oneLine, sessionRow, statusWord } from "./format.js";
import { type AdminCommand, CONFIG_KEYS, idKind, parseCommand, USAGE } from "./parse-command.js";
import { applySetting, CONFIG_FIELDS } from "./runtime-settings.js";
import { runTokenCommand } from "./token-commands.js";
import { listTools, setToolPolicy } from "./tool-commands.js";

export const SESSIONS_PAGE_SIZE = 10;

export interface AdminCommandsDependencies {
  engine: Pick<Engine, "answer" | "cancel" | "stop" | "retry" | "isAdmin" | "catalog">;
  store: SessionStore & AdminQueries & ApiStore;
  settings: RuntimeSettings;
  /** API_TOKENS' names, which `/parley tokens` lists but leaves to the environment. */
  envTokenNames?: readonly string[];
  /** Tool policy rules; `/parley tools policy` adds to them. */
  toolRules?: ToolRules;
  clock?: () => number;
}

interface Handled {
  reply: RichText;
  target: string;
  outcome: string;
}

/** `/parley`: platform-neutral parsing, authorization and handlers. Adapters only carry text in and out. */
export class AdminCommands {
  private readonly engine: AdminCommandsDependencies["engine"];
  private readonly store: SessionStore & AdminQueries & ApiStore;
  private readonly envTokenNames: readonly string[];
  private readonly settings: RuntimeSettings;
  private readonly toolRules: ToolRules | undefined;
  private readonly clock: () => number;

  constructor(deps: AdminCommandsDependencies) {
    this.engine = deps.engine;
    this.toolRules = deps.toolRules;
    this.store = deps.store;
    this.envTokenNames = deps.envTokenNames ?? [];
    this.settings = deps.settings;
    this.clock = deps.clock ?? Date.now;
  }

  /** Authorizes, parses, runs and audits one command line; every refusal is audited too. */
  async run(request: AdminRequest): Promise<AdminReply> {
    const { actor } = request;
    // Authorization rests on the platform's identity of the caller, never on anything a model wrote.
    if (!this.engine.isAdmin(actor)) {
      await this.audit(actor, "admin-refused", oneLine(request.text, 100), "refused");
      return { kind: "refused" };
    }
    const parsed = parseCommand(request.text);
    if (!parsed.ok) {
      await this.audit(actor, "admin-usage-error", oneLine(request.text, 100), "usage");
      return { kind: "reply", text: [parsed.error] };
    }
    const { reply, target, outcome } = await this.handle(parsed.command, actor);
    await this.audit(actor, `admin-${parsed.command.name}`, target, outcome);
    return { kind: "reply", text: reply };
  }

  private async handle(command: AdminCommand, actor: Actor): Promise<Handled> {
    switch (command.name) {
      case "help":
        return {
          reply: joinRich([[bold("Parley admin commands")], ...Object.values(USAGE).map((line) => rich`• ${code(line)}`)]),
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
        if (!session) return { reply: rich`No such session ${code(command.sessionId)}.`, target: command.sessionId, outcome: "unknown" };
        const retried = await this.engine.retry(session.id);
        if (!retried)
          return {
            reply: rich`Session ${code(session.id)} is ${statusWord(session)}, not failed: nothing to retry.`,
            target: session.id,
            outcome: "not-failed",
          };
        return { reply: rich`Retrying session ${code(session.id)} from its last message.`, target: session.id, outcome: "retried" };
      }
      case "stats":
        return { reply: await this.stats(), target: "-", outcome: "ok" };
      case "config":
        return this.config(command.key, command.value);
      case "tools":
        return command.rule
          ? setToolPolicy(command.rule, { catalog: this.engine.catalog, toolRules: this.toolRules, store: this.store })
          : { reply: listTools(this.engine.catalog), target: "-", outcome: "ok" };
      case "tokens":
        return runTokenCommand(command.command, actor, { store: this.store, envTokenNames: this.envTokenNames, clock: this.clock });
      case "purge": {
        const counts = await this.store.purgeEnded(this.clock() - command.olderThanDays * 86_400_000);
        return {
          reply: [
            `Purged ${counts.sessions} ended sessions older than ${command.olderThanDays} days: ${counts.messages} messages and ${counts.asks} asks. Pending and running sessions were not touched.`,
          ],
          target: `${command.olderThanDays}d`,
          outcome: `${counts.sessions} sessions`,
        };
      }
    }
  }

  private async sessions(command: Extract<AdminCommand, { name: "sessions" }>): Promise<RichText> {
    const sessions = await this.store.listSessions({
      status: command.status ?? undefined,
      channel: command.channel,
      ownerId: command.user,
      limit: SESSIONS_PAGE_SIZE + 1,
      offset: (command.page - 1) * SESSIONS_PAGE_SIZE,
    });
    const label = command.status === null ? "" : `${command.status === "waiting" ? "pending" : command.status} `;
    if (sessions.length === 0) return [command.page > 1 ? `No more ${label}sessions.` : `No ${label}sessions.`];
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
        ? [rich`More: ${code(`/parley sessions ${command.status === null ? "all" : label.trim()} --page ${command.page + 1}`)}`]
        : [];
    return joinRich([[bold(`${capitalize(`${label}sessions`)}, newest first (page ${command.page})`)], ...rows, ...more]);
  }

  private async show(sessionId: string): Promise<Handled> {
    const session = await this.store.getSession(sessionId);
    if (!session) return { reply: rich`No such session ${code(sessionId)}.`, target: sessionId, outcome: "unknown" };
    const asks = await this.store.listAsks(session.id);
    const now = this.clock();
    const { usage } = session;
    const lines: RichText[] = [
      [bold(`Session ${session.id}`)],
      sessionRow(session, undefined, now),
      rich`Turns: ${String(session.turnCount)} · last outcome: ${session.lastOutcome ?? "none"}${session.lastError ? rich` · last error: ${untrusted(oneLine(session.lastError, 300))}` : ""}`,
      [
        `Tokens: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.cacheReadTokens} cache read, ${usage.cacheWriteTokens} cache write`,
      ],
      asks.length > 0 ? [bold("Asks")] : ["No asks yet."],
      ...asks.map((ask) => askLine(ask, now)),
    ];
    return { reply: joinRich(lines), target: session.id, outcome: "ok" };
  }

  private async cancel(id: string, actor: Actor): Promise<Handled> {
    const kind = idKind(id);
    if (kind === undefined)
      return {
        reply: rich`${code(id)} is neither an ask id (12 letters, digits, - and _, as a card shows) nor a session id (a UUID, as /parley sessions lists): nothing was cancelled.`,
        target: id,
        outcome: "not-an-id",
      };
    if (kind === "ask") {
      const ask = await this.store.getAsk(id);
      if (!ask) return { reply: rich`No such ask ${code(id)}.`, target: id, outcome: "unknown" };
      const outcome = await this.engine.cancel(ask.id, actor);
      return {
        reply: describeOutcome(outcome, rich`Cancelled ask ${code(ask.id)}; the model was told it was cancelled.`),
        target: ask.id,
        outcome: outcome.kind,
      };
    }
    const session = await this.store.getSession(id);
    if (!session) return { reply: rich`No such session ${code(id)}.`, target: id, outcome: "unknown" };
    const stop = await this.engine.stop(session.id, actor);
    const reply =
      stop === "stopped"
        ? rich`Cancelled session ${code(session.id)}: its pending ask was cancelled and the turn ended.`
        : stop === "stopping"
          ? rich`Session ${code(session.id)} is running; it stops at its next step.`
          : rich`Session ${code(session.id)} has no turn to cancel (${statusWord(session)}).`;
    return { reply, target: session.id, outcome: stop };
  }

  private async answer(askId: string, value: string, actor: Actor): Promise<Handled> {
    const found = await this.store.getAskWithSession(askId);
    if (!found) return { reply: rich`No such ask ${code(askId)}.`, target: askId, outcome: "unknown" };
    const input = toAnswerInput(found.ask, value);
    if ("error" in input) return { reply: [input.error], target: askId, outcome: "invalid" };
    const outcome = await this.engine.answer(askId, actor, input);
    return {
      reply: describeOutcome(outcome, rich`Answered ask ${code(askId)} on behalf of ${mention(found.session.ownerId)}.`),
      target: askId,
      outcome: outcome.kind,
    };
  }

  private async stats(): Promise<RichText> {
    const stats = await this.store.stats();
    const sessions = stats.sessionsByStatus;
    const asks = stats.asksByStatus;
    return joinRich(
      [
        [bold("Parley stats")],
        `Sessions: ${sessions.waiting} pending, ${sessions.running} running, ${sessions.idle} idle, ${sessions.failed} failed`,
        `Asks: ${asks.pending} pending, ${asks.answered} answered, ${asks.cancelled} cancelled, ${asks.expired} expired`,
        `Median time to answer: ${stats.medianAnswerMs === null ? "n/a" : describeDuration(stats.medianAnswerMs)}`,
        `Tokens: ${stats.usage.inputTokens} in, ${stats.usage.outputTokens} out, ${stats.usage.cacheReadTokens} cache read, ${stats.usage.cacheWriteTokens} cache write`,
        `Database: ${(stats.databaseBytes / 1024 / 1024).toFixed(2)} MiB`,
      ].map((line) => (typeof line === "string" ? [line] : line)),
    );
  }

  private async config(key?: keyof typeof CONFIG_FIELDS, value?: string): Promise<Handled> {
    const settings = this.settings.get();
    if (!key) {
      const lines = CONFIG_KEYS.map((name) => rich`• ${code(name)} = ${String(settings[CONFIG_FIELDS[name]])}`);
      return { reply: joinRich([[bold("Runtime settings")], ...lines]), target: "-", outcome: "ok" };
    }
    if (value === undefined) return { reply: rich`${code(key)} = ${String(settings[CONFIG_FIELDS[key]])}`, target: key, outcome: "ok" };
    const applied = applySetting(settings, key, value);
    if (!applied.ok) return { reply: [`${applied.error}. Nothing was changed. Usage: ${USAGE.config}`], target: key, outcome: "invalid" };
    await this.store.saveSetting(key, value);
    this.settings.update(applied.settings);
    return {
      reply: rich`${code(key)} is now ${value}. It applies from the next step and survives restarts.`,
      target: key,
      outcome: `set ${value}`,
    };
  }

  private async audit(actor: Actor, action: string, target: string, outcome: string): Promise<void> {
    await this.store.audit({ actor: actor.id, action, target, outcome, at: this.clock() });
  }
}

function askLine(ask: Ask, now: number): RichText {
  const answer = ask.answer ? rich` → ${untrusted(describeAnswer(ask.spec, ask.answer.value, ask.answer.other))}` : [];
  const who = ask.answeredBy ? rich` by ${mention(ask.answeredBy)}` : [];
  const left = ask.status === "pending" ? ` (${describeDuration(ask.deadline - now)} left)` : "";
  return rich`• ${code(ask.id)} ${ask.spec.type} “${untrusted(oneLine(ask.spec.question, 80))}”: ${ask.status}${answer}${who}${left}`;
}

function toAnswerInput(ask: Ask, value: string): AnswerInput | { error: string } {
  if (ask.spec.type === "approval") return typedDecision(value) ?? answerFromText(ask.spec, value);
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

function describeOutcome(outcome: AnswerOutcome, success: RichText): RichText {
  switch (outcome.kind) {
    case "accepted":
      return success;
    case "invalid":
      return [`Not accepted: ${outcome.message}`];
    case "already-ended":
      return [`That ask already ended (${outcome.status}); nothing was changed.`];
    case "not-allowed":
      return answerNotice(outcome) ?? [];
    case "unknown-ask":
      return ["No such ask."];
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
