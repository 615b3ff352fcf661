import type { ChatMessage, ContentBlock } from "../ports/model-client.js";

/**
 * The history as the Messages API wants it: no empty messages, and consecutive messages of one role merged
 * (queued user messages are stored one row each).
 */
export function toRequestMessages(history: readonly ChatMessage[]): ChatMessage[] {
  const merged: ChatMessage[] = [];
  for (const message of history) {
    if (message.content.length === 0) continue;
    const last = merged.at(-1);
    if (last && last.role === message.role) {
      // Tool results must open a user message, so they go before any text merged into it.
      const content: ContentBlock[] = [...last.content, ...message.content];
      content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
      merged[merged.length - 1] = { role: last.role, content };
    } else {
      merged.push({ role: message.role, content: [...message.content] });
    }
  }
  return merged;
}

export function userText(authorLabel: string, text: string): ChatMessage {
  return { role: "user", content: [{ type: "text", text: `[${authorLabel}] ${text}` }] };
}

export function finalText(message: ChatMessage): string {
  return message.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n\n")
    .trim();
}
