import { hasSecret } from "../ask/answer.js";
import { describeAnswer } from "../ask/describe.js";
import { type AskResult, resultText } from "../ask/result.js";
import type { Actor, AnswerOutcome } from "../ports/conversation.js";
import type { ChatMessage } from "../ports/model-client.js";
import type { PlatformAdapter, Settlement } from "../ports/platform-adapter.js";
import { mention, rich } from "../ports/rich-text.js";
import type { Ask, AskStatus, Session, SessionStore } from "../ports/session-store.js";
import type { AskEndings } from "./ask-endings.js";
import type { CardDesk } from "./card-desk.js";
import type { ElicitationDesk } from "./elicitation-desk.js";
import type { TurnRunner } from "./turn-runner.js";

export interface Resolution {
  status: Exclude<AskStatus, "pending">;
  /** What the model reads now; may hold a password. */
  result: AskResult;
  /** What the store keeps; secrets masked. */
  storedResult: AskResult;
  answer: Ask["answer"];
  actor: Actor | null;
  /** Stop: end the turn instead of resuming it. */
  stop?: boolean;
}

export interface AskResolverDependencies {
  store: SessionStore;
  cards: CardDesk;
  turns: TurnRunner;
  elicitations: ElicitationDesk;
  endings: AskEndings;
  adapterFor: (session: Session) => PlatformAdapter;
  isAdmin: (actor: Actor) => boolean;
  track: (task: () => Promise<void>) => void;
  clock: () => number;
}

/**
 * The message the claim appends. An approval appends none: the turn reads its decision when it runs the call.
 * A Stop that ends the turn on an approval answers every call of the message `cancelled`, so no tool_use is left open.
 */
function resultMessageOf(ask: Ask, resolution: Resolution): ChatMessage | null {
  if (ask.spec.detached || ask.spec.external) return null;
  if (ask.spec.type === "approval") {
    if (!resolution.stop) return null;
    const own = { type: "tool_result" as const, tool_use_id: ask.toolUseId, content: "cancelled", is_error: true };
    return { role: "user", content: [own, ...ask.siblingResults] };
  }
  return {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: ask.toolUseId, content: resultText(resolution.storedResult) }, ...ask.siblingResults],
  };
}

/** Ends an ask exactly once (answer, cancel, timeout, stop), then settles its card and resumes or ends the turn. */
export class AskResolver {
  constructor(private readonly deps: AskResolverDependencies) {}

  async resolve(ask: Ask, session: Session, resolution: Resolution): Promise<AnswerOutcome> {
    const { actor, stop } = resolution;
    const now = this.deps.clock();
    const resultMessage = resultMessageOf(ask, resolution);
    const resumes = !ask.spec.detached && !stop && !ask.spec.external;
    // Claim once: the compare-and-set, the result message and the audit row are one transaction.
    const won = await this.deps.store.resolveAsk(ask.id, {
      status: resolution.status,
      answer: resolution.answer,
      answeredBy: actor?.id ?? null,
      resultMessage,
      // An elicitation's answer goes to the call waiting for it; the turn's state is not this claim's to change.
      // An API ask's session waited on it alone: it goes back to idle, and the answer to whoever asked.
      sessionStatus: resumes ? "running" : ask.spec.detached ? null : "idle",
      // The turn it resumes is run here, next: its lease comes with the claim, one write fewer.
      ...(resumes ? { lease: this.deps.turns.leaseFor(now) } : {}),
      outcome: stop ? "cancelled" : undefined,
      audit: {
        actor: actor?.id ?? "system",
        action: stop ? "ask-stop" : `ask-${resolution.status}`,
        target: ask.id,
        outcome: stop ? "stopped" : resolution.status,
        at: now,
      },
      now,
    });
    if (!won) {
      const current = await this.deps.store.getAsk(ask.id);
      return { kind: "already-ended", status: current?.status ?? resolution.status };
    }
    this.deps.endings.ended(won, resolution.result);
    const byAdmin = actor !== null && actor.id !== session.ownerId && this.deps.isAdmin(actor);
    const settlement: Settlement = {
      status: resolution.status,
      answerText: resolution.answer ? describeAnswer(ask.spec, resolution.answer.value, resolution.answer.other) : undefined,
      by: actor?.id,
      ...(byAdmin ? { byAdmin } : {}),
      ...(stop ? { stopped: true } : {}),
    };
    // The real secret lives only in this in-memory message; the store has the masked one.
    const secret =
      hasSecret(ask.spec) && resolution.status === "answered"
        ? { toolUseId: ask.toolUseId, content: resultText(resolution.result) }
        : undefined;
    this.deps.track(async () => {
      await this.deps.cards.settle(won, session, settlement);
      if (ask.spec.external) return;
      if (ask.spec.detached) this.deps.elicitations.settle(won, resolution.status, resolution.result.ok ? resolution.result.value : null);
      // A waiting turn shows no status line (its card took that place), so the notice is all there is to say.
      else if (stop) await this.deps.adapterFor(session).postNotice(session.conversation, rich`⏹ Stopped by ${mention(actor?.id ?? "?")}.`);
      else await this.deps.turns.run(session.id, secret, now);
    });
    return { kind: "accepted" };
  }
}
