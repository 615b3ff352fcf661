import { randomBytes } from "node:crypto";
import type { AnswerValue } from "../ask/answer.js";
import { elicitationAnswer, elicitationSpec } from "../ask/elicitation.js";
import type { Ask, AskStatus, Session, SessionStore } from "../ports/session-store.js";
import type { ElicitationRequest, ElicitationResponse } from "../ports/tool-provider.js";
import type { CardDesk } from "./card-desk.js";

export interface ElicitationDeskDependencies {
  store: SessionStore;
  cards: CardDesk;
  clock: () => number;
  /** How long a form may wait: it lives as long as the call that asked (TOOL_TIMEOUT_S). */
  timeoutSeconds: number;
  track: (task: () => Promise<void>) => void;
}

interface Waiting {
  request: ElicitationRequest;
  resolve: (response: ElicitationResponse) => void;
}

/**
 * A server's elicitation during a tool call, as a form card: an ask that suspends nothing. The call waits here, in
 * this process, for a person's answer, the card's deadline or the call's end, whichever comes first.
 */
export class ElicitationDesk {
  private readonly waiting = new Map<string, Waiting>();

  constructor(private readonly deps: ElicitationDeskDependencies) {}

  async ask(session: Session, server: string, request: ElicitationRequest): Promise<ElicitationResponse> {
    const { store, clock } = this.deps;
    const spec = elicitationSpec(request, server, this.deps.timeoutSeconds);
    const id = randomBytes(9).toString("base64url");
    const now = clock();
    // Persist, then post, as for every ask; its tool_use id only has to be unique within the session.
    await store.openAsk(
      session.id,
      { id, toolUseId: `elicitation:${id}`, spec, siblingResults: [], deadline: now + spec.timeoutSeconds * 1000 },
      now,
    );
    const answered = new Promise<ElicitationResponse>((resolve) => this.waiting.set(id, { request, resolve }));
    const onEnd = () => this.deps.track(() => this.end(id, session, "call-ended"));
    if (request.signal?.aborted) onEnd();
    else request.signal?.addEventListener("abort", onEnd, { once: true });
    this.deps.track(() => this.deps.cards.post(id));
    try {
      return await answered;
    } finally {
      request.signal?.removeEventListener("abort", onEnd);
      this.waiting.delete(id);
    }
  }

  /** After the claim: a person's answer or Cancel, or the deadline, reaches the call still waiting in this process. */
  settle(ask: Ask, status: Exclude<AskStatus, "pending">, value: AnswerValue | null): void {
    const waiting = this.waiting.get(ask.id);
    if (!waiting) return;
    if (status === "answered") waiting.resolve(elicitationAnswer(waiting.request, value));
    // Cancel tapped by a person is a refusal to answer; a deadline or an ended call is no answer at all.
    else waiting.resolve({ action: status === "cancelled" ? "decline" : "cancel" });
  }

  /**
   * At start-up, before the running turns go again: a form left open by a crash has no call waiting for it any
   * more. It is taken down, so nobody answers into the void and the turn's next ask is the session's only one.
   */
  async abandonOrphans(session: Session): Promise<void> {
    for (let ask = await this.deps.store.pendingAsk(session.id); ask?.spec.detached; ask = await this.deps.store.pendingAsk(session.id)) {
      await this.end(ask.id, session, "restarted");
    }
  }

  /** The call ended first: the form is taken down (claimed as cancelled) and the call hears `cancel`. */
  private async end(askId: string, session: Session, outcome: string): Promise<void> {
    this.waiting.get(askId)?.resolve({ action: "cancel" });
    const now = this.deps.clock();
    const won = await this.deps.store.resolveAsk(askId, {
      status: "cancelled",
      answer: null,
      answeredBy: null,
      resultMessage: null,
      sessionStatus: null,
      audit: { actor: "system", action: "ask-cancelled", target: askId, outcome, at: now },
      now,
    });
    if (won) await this.deps.cards.settle(won, session, { status: "cancelled" });
  }
}
