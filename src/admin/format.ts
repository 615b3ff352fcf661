import type { Ask, ConversationRef, Session } from "../ports/session-store.js";

export function describeDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  if (seconds < 90) return `${seconds}s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes}m`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours}h` : `${Math.round(hours / 24)}d`;
}

/** A link both Slack and Discord render: a channel mention (on Discord the thread is itself a channel). */
export function describeLocation(conversation: ConversationRef): string {
  if (conversation.platform === "discord") return `<#${conversation.thread}>`;
  if (conversation.platform === "slack") return `<#${conversation.channel}> thread ${conversation.thread}`;
  return conversation.platform;
}

export function statusWord(session: Session): string {
  return session.status === "waiting" ? "pending" : session.status;
}

export function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Neutralises mass mentions so nothing a model or user wrote can ping a channel from an admin reply. */
export function inert(text: string): string {
  return text.replace(/<!(channel|here|everyone)[^>]*>/g, "(@$1)").replace(/@(everyone|here)/g, "@\u200b$1");
}

export function sessionRow(session: Session, ask: Ask | undefined, now: number): string {
  const parts = [
    `\`${session.id}\``,
    describeLocation(session.conversation),
    `<@${session.ownerId}>`,
    statusWord(session),
    `${describeDuration(now - session.createdAt)} old`,
  ];
  if (ask) parts.push(`asks “${inert(truncate(ask.spec.question, 80))}” (\`${ask.id}\`, ${describeDuration(ask.deadline - now)} left)`);
  return `• ${parts.join(" · ")}`;
}
