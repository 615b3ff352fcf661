import type { ConversationRef } from "./session-store.js";

/**
 * Text the core writes for people (notices, progress, admin replies), free of any platform's markup.
 * Each adapter renders it in its own dialect: Slack `*bold*`, Discord `**bold**`, the terminal plain.
 */
export type Inline =
  | string
  | { mention: string }
  | { bold: string }
  | { code: string }
  | { place: ConversationRef }
  | { untrusted: string };
export type RichText = readonly Inline[];

/** A person, by platform user id; the adapter writes its own mention (and never pings in private notices). */
export const mention = (userId: string): Inline => ({ mention: userId });
export const bold = (text: string): Inline => ({ bold: text });
export const code = (text: string): Inline => ({ code: text });
/** Text a model or a person wrote: the adapter shows it as typed and lets it ping nobody. */
export const untrusted = (text: string): Inline => ({ untrusted: text });
/** A conversation, as a link where the platform has one. */
export const place = (conversation: ConversationRef): Inline => ({ place: conversation });

/** Builds rich text from a template: rich`Only ${mention(id)} or an admin can answer this.` */
export function rich(strings: TemplateStringsArray, ...values: Array<Inline | RichText>): RichText {
  const parts: Inline[] = [];
  strings.forEach((text, index) => {
    if (text) parts.push(text);
    const value = values[index];
    if (value === undefined) return;
    if (Array.isArray(value)) parts.push(...(value as RichText));
    else parts.push(value as Inline);
  });
  return parts;
}

/** Joins paragraphs or lines with a separator. */
export function joinRich(lines: readonly RichText[], separator = "\n"): RichText {
  return lines.flatMap((line, index) => (index === 0 ? [...line] : [separator, ...line]));
}

/** How one platform writes each kind of inline. */
export interface RichTextDialect {
  text(text: string): string;
  mention(userId: string): string;
  bold(text: string): string;
  code(text: string): string;
  place(conversation: ConversationRef): string;
  untrusted(text: string): string;
}

export function renderRichText(text: RichText, dialect: RichTextDialect): string {
  return text
    .map((part) => {
      if (typeof part === "string") return dialect.text(part);
      if ("mention" in part) return dialect.mention(part.mention);
      if ("bold" in part) return dialect.bold(part.bold);
      if ("code" in part) return dialect.code(part.code);
      if ("untrusted" in part) return dialect.untrusted(part.untrusted);
      return dialect.place(part.place);
    })
    .join("");
}

/** Plain text, for logs, the terminal and tests: mentions as `@id`, no markup. */
export const PLAIN_DIALECT: RichTextDialect = {
  text: (text) => text,
  mention: (userId) => `@${userId}`,
  bold: (text) => text,
  code: (text) => text,
  place: (conversation) => `${conversation.channel}/${conversation.thread}`,
  untrusted: (text) => text,
};
