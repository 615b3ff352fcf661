import type { types } from "@slack/bolt";
import { ANSWER_MODAL_CALLBACK_ID } from "./render-modal.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeMrkdwn, mrkdwnText, plainText } from "./slack-text.js";

/** Replaces an answer modal with a short notice, when its ask ended or the person may not answer. */
export function renderNoticeModal(text: string): types.ModalView {
  return {
    type: "modal",
    callback_id: `${ANSWER_MODAL_CALLBACK_ID}-notice`,
    title: plainText("Parley", SLACK_LIMITS.modalTitleChars),
    close: plainText("Close", SLACK_LIMITS.modalButtonChars),
    blocks: [{ type: "section", text: mrkdwnText(escapeMrkdwn(text)) }],
  };
}
