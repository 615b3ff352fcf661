import { createInterface } from "node:readline";
import type { Actor, Conversation } from "../../src/ports/conversation.js";
import type { CardView, PlatformAdapter, ProgressView, Settlement } from "../../src/ports/platform-adapter.js";
import { PLAIN_DIALECT, type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { renderCard, renderFieldPrompt, renderSettlement } from "./render-card.js";

export const TERMINAL_CONVERSATION: ConversationRef = { platform: "terminal", workspace: "local", channel: "terminal", thread: "main" };
const TERMINAL_USER: Actor = { id: "you", name: "you", isAdmin: true };
/** One person at one keyboard: a mention of them is "you". */
const TERMINAL_DIALECT: RichTextDialect = { ...PLAIN_DIALECT, mention: (userId) => (userId === TERMINAL_USER.id ? "you" : `@${userId}`) };
const plain = (text: RichText) => renderRichText(text, TERMINAL_DIALECT);

/**
 * The terminal: one conversation, read line by line (so piped input works), drawn as text.
 * Each line waits for the bot to go quiet before the next is read, so a script can answer asks in order.
 */
export class TerminalAdapter implements PlatformAdapter {
  readonly platform = "terminal";
  private lastProgress = "";
  private form: { askId: string; card: CardView; index: number; values: Record<string, string> } | undefined;
  private lineCounter = 0;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly clock: () => number = Date.now,
  ) {}

  async postCard(card: CardView): Promise<string> {
    this.write(renderCard(card, this.clock()));
    if (card.spec.type === "form") this.beginForm(card);
    return `terminal:${card.askId}`;
  }

  async settleCard(_card: CardView, settlement: Settlement): Promise<void> {
    this.write(renderSettlement(settlement));
  }

  async postMessage(_conversation: ConversationRef, markdown: string): Promise<void> {
    this.write(`Parley: ${markdown}`);
  }

  async postNotice(_conversation: ConversationRef, text: RichText): Promise<void> {
    this.write(`Parley: ${plain(text)}`);
  }

  async notifyPrivately(_conversation: ConversationRef, _userId: string, text: RichText): Promise<void> {
    this.write(`(${plain(text)})`);
  }

  async showProgress(progress: ProgressView): Promise<void> {
    const text = plain(progress.text);
    if (text === this.lastProgress) return;
    this.lastProgress = progress.done ? "" : text;
    if (!progress.done) this.write(`· ${text}`);
  }

  /** Reads lines until the input ends, then lets the running turn finish. */
  async run(conversation: Conversation): Promise<void> {
    const card = await conversation.pendingCard(TERMINAL_CONVERSATION);
    if (card) {
      // A question left from the last run: draw it again and take its answer.
      this.write(renderCard(card, this.clock()));
      if (card.spec.type === "form") this.beginForm(card);
    } else {
      this.write('Parley is listening. Type a request; "stop" stops a turn; end input (Ctrl+D) to quit.');
    }
    const lines = createInterface({ input: this.input, terminal: false });
    for await (const line of lines) {
      await this.handleLine(conversation, line);
      await conversation.idle();
    }
    await conversation.idle();
  }

  private async handleLine(conversation: Conversation, line: string): Promise<void> {
    const pending = await conversation.pendingCard(TERMINAL_CONVERSATION);
    if (pending && line.trim().toLowerCase() === "cancel") {
      this.form = undefined;
      await conversation.cancel(pending.askId, TERMINAL_USER);
      return;
    }
    if (pending && this.form?.askId === pending.askId) {
      await this.continueForm(conversation, line);
      return;
    }
    if (!pending && line.trim() === "") return;
    await conversation.handleMessage({
      eventId: `terminal:${this.clock()}:${++this.lineCounter}`,
      conversation: TERMINAL_CONVERSATION,
      author: TERMINAL_USER,
      text: line,
      addressedToBot: true,
    });
  }

  private beginForm(card: CardView): void {
    this.form = { askId: card.askId, card, index: 0, values: {} };
    this.write(renderFieldPrompt(card, 0));
  }

  private async continueForm(conversation: Conversation, line: string): Promise<void> {
    const form = this.form!;
    const field = form.card.spec.fields[form.index]!;
    form.values[field.name] = line;
    form.index++;
    if (form.index < form.card.spec.fields.length) {
      this.write(renderFieldPrompt(form.card, form.index));
      return;
    }
    const outcome = await conversation.answer(form.askId, TERMINAL_USER, { kind: "form", values: form.values });
    if (outcome.kind === "invalid") {
      this.write(`(${outcome.message} Let's go again.)`);
      this.beginForm(form.card);
      return;
    }
    this.form = undefined;
  }

  private write(text: string): void {
    this.output.write(`${text}\n`);
  }
}
