import type { ProgressView } from "../../src/ports/platform-adapter.js";
import { actionIds } from "./action-ids.js";
import type { SlackMessage } from "./render-card.js";
import { toMrkdwn } from "./slack-dialect.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeMrkdwn, mrkdwnText, plainText, truncate } from "./slack-text.js";

const STATUS_CHARS = 500;

/** A turn's status line; a Stop button while the turn runs, none once it is over. */
export function renderProgress(progress: ProgressView): SlackMessage {
  const status = escapeMrkdwn(truncate(toMrkdwn(progress.text), STATUS_CHARS));
  const line = progress.done ? status : progress.waiting ? `⏸ ${status}` : `⏳ ${status}`;
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
