import { type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";

/** The core's rich text in Discord Markdown: `**bold**`, `<@id>` mentions, a thread as `<#id>`. */
export const DISCORD_DIALECT: RichTextDialect = {
  text: (text) => text,
  mention: (userId) => `<@${userId}>`,
  bold: (text) => `**${text}**`,
  code: (text) => `\`${text}\``,
  // On Discord a thread is itself a channel, so it links directly.
  place: (conversation) => `<#${conversation.thread}>`,
  // Mass mentions written by a model or a person are defused: they show as typed and ping nobody.
  untrusted: (text) => text.replace(/<!(channel|here|everyone)[^>]*>/g, "(@$1)").replace(/@(everyone|here)/g, "@\u200b$1"),
};

export function toDiscordMarkdown(text: RichText): string {
  return renderRichText(text, DISCORD_DIALECT);
}
