import type { AdminReply } from "../../src/ports/conversation.js";
import type { Platform } from "../../src/ports/ids.js";
import type {
  CardView,
  PlatformAdapter,
  PostCardOptions,
  ProgressView,
  ReplyOptions,
  Settlement,
} from "../../src/ports/platform-adapter.js";
import { type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";
import type { ConversationRef } from "../../src/ports/session-store.js";

/** How the recording adapter writes the core's rich text: Slack's dialect, so assertions read like the thread. */
export const RECORDED_DIALECT: RichTextDialect = {
  text: (text) => text,
  mention: (userId) => `<@${userId}>`,
  bold: (text) => `*${text}*`,
  code: (text) => `\`${text}\``,
  place: (conversation) => `${conversation.channel}/${conversation.thread}`,
  // Mass mentions written by a model or a person are defused: they show as typed and ping nobody.
  untrusted: (text) => text.replace(/<!(channel|here|everyone)[^>]*>/g, "(@$1)").replace(/@(everyone|here)/g, "@\u200b$1"),
};
const recorded = (text: RichText) => renderRichText(text, RECORDED_DIALECT);

/** An admin reply as a platform would show it; a refusal in the words both platforms share. */
export function recordedAdminReply(reply: AdminReply): string {
  return reply.kind === "refused" ? "Sorry, `/parley` is for admins only. Nothing was changed." : recorded(reply.text);
}

/** A PlatformAdapter that draws nothing and remembers everything, for engine tests and benches. */
export class RecordingAdapter implements PlatformAdapter {
  readonly platform: Platform;
  readonly cards: CardView[] = [];
  /** The options each card in `cards` was posted with. */
  readonly cardOptions: PostCardOptions[] = [];
  readonly settled: Array<{ card: CardView; settlement: Settlement }> = [];
  readonly messages: Array<{ conversation: ConversationRef; text: string; options?: ReplyOptions }> = [];
  readonly notices: Array<{ userId: string; text: string }> = [];
  readonly progress: ProgressView[] = [];
  /** Set to make the next card posts fail, as a platform outage would. */
  failCardPosts = 0;
  /** Set to make card posts wait until it resolves, as a slow platform would. */
  holdCardPosts: Promise<void> | undefined;
  /** Set to make final answers wait until it resolves, as a slow platform would. */
  holdMessages: Promise<void> | undefined;
  /** Set to make the next messages (final answers) fail. */
  failMessages = 0;
  /** Set to make the next card settles fail. */
  failSettles = 0;
  private cardCounter = 0;

  constructor(platform: Platform = "slack") {
    this.platform = platform;
  }

  async postCard(card: CardView, options: PostCardOptions = {}): Promise<string> {
    await this.holdCardPosts;
    if (this.failCardPosts > 0) {
      this.failCardPosts--;
      throw new Error("platform unavailable");
    }
    this.cards.push(card);
    this.cardOptions.push(options);
    return `card-${++this.cardCounter}`;
  }

  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    if (this.failSettles > 0) {
      this.failSettles--;
      throw new Error("platform unavailable");
    }
    this.settled.push({ card, settlement });
  }

  async postMessage(conversation: ConversationRef, text: string, options?: ReplyOptions): Promise<void> {
    await this.holdMessages;
    if (this.failMessages > 0) {
      this.failMessages--;
      throw new Error("platform unavailable");
    }
    this.messages.push({ conversation, text, ...(options ? { options } : {}) });
  }

  async postNotice(conversation: ConversationRef, text: RichText): Promise<void> {
    this.messages.push({ conversation, text: recorded(text) });
  }

  async notifyPrivately(_conversation: ConversationRef, userId: string, text: RichText): Promise<void> {
    this.notices.push({ userId, text: recorded(text) });
  }

  async showProgress(progress: ProgressView): Promise<void> {
    this.progress.push(progress);
  }
}
