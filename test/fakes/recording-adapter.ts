import type { CardView, PlatformAdapter, ProgressView, Settlement } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";

/** A PlatformAdapter that draws nothing and remembers everything, for engine tests and benches. */
export class RecordingAdapter implements PlatformAdapter {
  readonly platform: string;
  readonly cards: CardView[] = [];
  readonly settled: Array<{ card: CardView; settlement: Settlement }> = [];
  readonly messages: Array<{ conversation: ConversationRef; text: string }> = [];
  readonly notices: Array<{ userId: string; text: string }> = [];
  readonly progress: ProgressView[] = [];
  /** Set to make the next card posts fail, as a platform outage would. */
  failCardPosts = 0;
  /** Set to make card posts wait until it resolves, as a slow platform would. */
  holdCardPosts: Promise<void> | undefined;
  /** Set to make the next card settles fail. */
  failSettles = 0;
  private cardCounter = 0;

  constructor(platform = "test") {
    this.platform = platform;
  }

  async postCard(card: CardView): Promise<string> {
    await this.holdCardPosts;
    if (this.failCardPosts > 0) {
      this.failCardPosts--;
      throw new Error("platform unavailable");
    }
    this.cards.push(card);
    return `card-${++this.cardCounter}`;
  }

  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    if (this.failSettles > 0) {
      this.failSettles--;
      throw new Error("platform unavailable");
    }
    this.settled.push({ card, settlement });
  }

  async postMessage(conversation: ConversationRef, text: string): Promise<void> {
    this.messages.push({ conversation, text });
  }

  async notifyPrivately(_conversation: ConversationRef, userId: string, text: string): Promise<void> {
    this.notices.push({ userId, text });
  }

  async showProgress(progress: ProgressView): Promise<void> {
    this.progress.push(progress);
  }
}
