import type { StoreStats } from "../ports/maintenance-store.js";
import type { Ask, Session } from "../ports/session-store.js";

/** `/parley stats` over the in-memory store's rows. */
export function computeStats(sessions: Iterable<Session>, asks: Iterable<Ask>): StoreStats {
  const sessionsByStatus = { idle: 0, running: 0, waiting: 0, failed: 0 };
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const session of sessions) {
    sessionsByStatus[session.status]++;
    for (const key of Object.keys(usage) as Array<keyof typeof usage>) usage[key] += session.usage[key];
  }
  const asksByStatus = { pending: 0, answered: 0, cancelled: 0, expired: 0 };
  const durations: number[] = [];
  for (const ask of asks) {
    asksByStatus[ask.status]++;
    if (ask.status === "answered" && ask.endedAt !== null) durations.push(ask.endedAt - ask.createdAt);
  }
  durations.sort((a, b) => a - b);
  const medianAnswerMs = durations.length === 0 ? null : (durations[Math.floor((durations.length - 1) / 2)] ?? null);
  return { sessionsByStatus, asksByStatus, medianAnswerMs, usage, databaseBytes: 0 };
}
