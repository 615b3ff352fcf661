import { type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";
import { escapeUntrusted } from "./slack-text.js";

/** The core's rich text in Slack mrkdwn: `*bold*`, `<@U…>` mentions, `<#C…>` channel links. */
export const SLACK_DIALECT: RichTextDialect = {
  text: (text) => text,
  mention: (userId) => `<@${userId}>`,
  bold: (text) => `*${text}*`,
  code: (text) => `\`${text}\``,
  place: (conversation) => `<#${conversation.channel}> thread ${conversation.thread}`,
  // Text a model, a person or a tool's server wrote shows as typed and pings nobody: `<@U123>` and `<!channel>` are
  // escaped like any other `<…>`, and a bare @everyone gets a zero-width space in case link_names is ever turned on.
  untrusted: (text) => escapeUntrusted(text).replace(/@(everyone|here|channel)/g, "@\u200b$1"),
};

export function toMrkdwn(text: RichText): string {
  return renderRichText(text, SLACK_DIALECT);
}
