import type { AnswerValue } from "../ask/answer.js";
import { type AskResult, answeredResult } from "../ask/result.js";
import type { ExternalAsk } from "../ports/api-store.js";
import type { AskView } from "../ports/ask-api.js";
import type { Ask, Session } from "../ports/session-store.js";

/** The §2 result of an ended ask, from its stored (masked) answer; null while it is pending. */
export function storedResult(ask: Ask): AskResult | null {
  if (ask.status === "answered" && ask.answer) return answeredResult(ask.answer.value as AnswerValue, ask.answer.other);
  if (ask.status === "cancelled") return { ok: false, cancelled: true };
  if (ask.status === "expired") return { ok: false, timeout: true };
  return null;
}

/** The body of `GET /v1/asks/{id}` and of a callback. */
export function askView(ask: Ask, session: Session, external: ExternalAsk): AskView {
  return {
    id: ask.id,
    status: ask.status,
    result: storedResult(ask),
    answered_by: ask.answeredBy ? `${session.conversation.platform}:${ask.answeredBy}` : null,
    created_at: new Date(ask.createdAt).toISOString(),
    ended_at: ask.endedAt === null ? null : new Date(ask.endedAt).toISOString(),
    metadata: external.metadata,
  };
}
