import { type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";

/** The core's rich text in Slack mrkdwn: `*bold*`, `<@U…>` mentions, `<#C…>` channel links. */
export const SLACK_DIALECT: RichTextDialect = {
  text: (text) => text,
  mention: (userId) => `<@${userId}>`,
  bold: (text) => `*${text}*`,
  code: (text) => `\`${text}\``,
  place: (conversation) => `<#${conversation.channel}> thread ${conversation.thread}`,
  // Mass mentions written by a model or a person are defused: they show as typed and ping nobody.
  untrusted: (text) => text.replace(/<!(channel|here|everyone)[^>]*>/g, "(@$1)").replace(/@(everyone|here)/g, "@\u200b$1"),
};

export function toMrkdwn(text: RichText): string {
  return renderRichText(text, SLACK_DIALECT);
}
