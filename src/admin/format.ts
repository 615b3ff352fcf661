import { API_OWNER_PREFIX } from "../api/api-tokens.js";
import { code, mention, place, type RichText, rich, untrusted } from "../ports/rich-text.js";
import type { Ask, Session } from "../ports/session-store.js";
import { truncate } from "../ports/truncate.js";

export function describeDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  if (seconds < 90) return `${seconds}s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes}m`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours}h` : `${Math.round(hours / 24)}d`;
}

export function statusWord(session: Session): string {
  return session.status === "waiting" ? "pending" : session.status;
}

/** Text on one line (runs of white space become one space), at most `max` characters, ending in … when cut. */
export function oneLine(text: string, max: number): string {
  return truncate(text.replace(/\s+/g, " ").trim(), max);
}

export function sessionRow(session: Session, ask: Ask | undefined, now: number): RichText {
  // A session an API token opened is owned by `api:<token name>`: shown as the token, not as a person.
  const owner = session.ownerId.startsWith(API_OWNER_PREFIX)
    ? rich`token ${code(session.ownerId.slice(API_OWNER_PREFIX.length))}`
    : rich`${mention(session.ownerId)}`;
  const row = rich`• ${code(session.id)} · ${place(session.conversation)} · ${owner} · ${statusWord(session)} · ${describeDuration(now - session.createdAt)} old`;
  if (!ask) return row;
  return rich`${row} · asks “${untrusted(oneLine(ask.spec.question, 80))}” (${code(ask.id)}, ${describeDuration(ask.deadline - now)} left)`;
}
