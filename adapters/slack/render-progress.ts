import type { ProgressView } from "../../src/ports/platform-adapter.js";
import { type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";
import { actionIds } from "./action-ids.js";
import type { SlackMessage } from "./render-card.js";
import { SLACK_DIALECT } from "./slack-dialect.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeMrkdwn, mrkdwnText, plainText, truncate } from "./slack-text.js";

const STATUS_CHARS = 500;

/**
 * The core's own words escaped as Slack requires, its mentions kept; untrusted parts (a server's progress) are
 * escaped once, by the dialect, so escaping the whole line again would neither double them nor let `<@U…>` through.
 */
const STATUS_DIALECT: RichTextDialect = {
  ...SLACK_DIALECT,
  text: escapeMrkdwn,
  bold: (text) => SLACK_DIALECT.bold(escapeMrkdwn(text)),
  code: (text) => SLACK_DIALECT.code(escapeMrkdwn(text)),
};

/** A turn's status line; a Stop button while the turn runs, none once it is over. */
export function renderProgress(progress: ProgressView): SlackMessage {
  const status = truncate(renderRichText(progress.text, STATUS_DIALECT), STATUS_CHARS);
  const line = progress.done ? status : `⏳ ${status}`;
  return {
    text: line,
    blocks: [
      { type: "context", elements: [mrkdwnText(line)] },
      ...(progress.done
        ? []
        : [
            {
              type: "actions" as const,
              elements: [
                {
                  type: "button" as const,
                  text: plainText("Stop", SLACK_LIMITS.buttonTextChars),
                  style: "danger" as const,
                  action_id: actionIds.stop(progress.sessionId),
                },
              ],
            },
          ]),
    ],
  };
}
