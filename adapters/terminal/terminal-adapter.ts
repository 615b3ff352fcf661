import { createInterface } from "node:readline";
import { typedDecision } from "../../src/ask/approval.js";
import type { Actor, Conversation } from "../../src/ports/conversation.js";
import type { AskId } from "../../src/ports/ids.js";
import type { CardView, PlatformAdapter, ProgressView, Settlement } from "../../src/ports/platform-adapter.js";
import { PLAIN_DIALECT, type RichText, type RichTextDialect, renderRichText } from "../../src/ports/rich-text.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { renderCard, renderFieldPrompt, renderSettlement } from "./render-card.js";

export const TERMINAL_CONVERSATION: ConversationRef = { platform: "terminal", workspace: "local", channel: "terminal", thread: "main" };
const TERMINAL_USER: Actor = { id: "you", name: "you", isAdmin: true };
/** One person at one keyboard: a mention of them is "you". */
const TERMINAL_DIALECT: RichTextDialect = { ...PLAIN_DIALECT, mention: (userId) => (userId === TERMINAL_USER.id ? "you" : `@${userId}`) };
const plain = (text: RichText) => renderRichText(text, TERMINAL_DIALECT);

/** The line that stops a running turn at once; the engine decides what a stop is, the terminal only lets it jump the queue. */
const STOP_LINE = /^\s*stop\s*$/i;

/**
 * The terminal: one conversation, read line by line (so piped input works), drawn as text.
 * Input is read all the time, but each line waits for the bot to go quiet before it is handled, so a script
 * can answer asks in order; only `stop` jumps the queue, so that it stops a running turn at its next step.
 */
export class TerminalAdapter implements PlatformAdapter {
  readonly platform = "terminal";
  readonly freeProgress = true;
  private lastProgress = "";
  private form: { askId: AskId; card: CardView; index: number; values: Record<string, string> } | undefined;
  private lineCounter = 0;
  /** Cards drawn on this screen since start: only their endings are printed. */
  private readonly drawn = new Set<string>();

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly clock: () => number = Date.now,
    /** Where the logs go instead of the screen, told in the greeting. */
    private readonly logPath?: string,
  ) {}

  async postCard(card: CardView): Promise<string> {
    // What the turn says next ends its status: the next step's "Thinking…" is printed again.
    this.lastProgress = "";
    this.draw(card);
    return `terminal:${card.askId}`;
  }

  /**
   * Prints how a card on this screen ended. Start-up settles the asks that ended in the last hour again (for
   * platforms whose cards may still show buttons after a crash); a terminal has no such card, so those are skipped.
   */
  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    if (!this.drawn.delete(card.askId)) return;
    this.write(renderSettlement(settlement));
  }

  async postMessage(_conversation: ConversationRef, markdown: string): Promise<void> {
    this.lastProgress = "";
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
    // The card itself says who is awaited; the terminal prints only what the agent is doing.
    if (!progress.done) this.write(`· ${text}`);
  }

  /**
   * Greets, and draws the question left from the last run, if any, so that its answer can be typed. Called before
   * start-up recovery, so a question that expired while Parley was down is seen to expire.
   */
  async open(conversation: Conversation): Promise<void> {
    const logs = this.logPath ? ` Logs go to ${this.logPath}.` : "";
    this.write(`Parley is listening. Type a request; "stop" stops a turn; end input (Ctrl+D) to quit.${logs}`);
    const card = await conversation.pendingCard(TERMINAL_CONVERSATION);
    if (card) this.draw(card);
  }

  /** Reads lines until the input ends, then lets the running turn finish. */
  async run(conversation: Conversation): Promise<void> {
    const queue: string[] = [];
    let ended = false;
    let busy = false;
    let wake = () => {};
    const lines = createInterface({ input: this.input, terminal: false });
    lines.on("line", (line) => {
      if (busy && STOP_LINE.test(line))
        this.handleLine(conversation, line).catch((error: unknown) => this.write(`(stop failed: ${String(error)})`));
      else queue.push(line);
      wake();
    });
    lines.on("close", () => {
      ended = true;
      wake();
    });
    for (;;) {
      const line = queue.shift();
      if (line === undefined) {
        if (ended) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      busy = true;
      await this.handleLine(conversation, line);
      await conversation.idle();
      busy = false;
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
    const decision = pending?.spec.type === "approval" ? typedDecision(line) : undefined;
    if (pending && decision) {
      await conversation.answer(pending.askId, TERMINAL_USER, decision);
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

  private draw(card: CardView): void {
    // Start-up may post a card that open() already drew again.
    if (this.drawn.has(card.askId)) return;
    this.drawn.add(card.askId);
    this.write(renderCard(card, this.clock()));
    if (card.spec.type === "form") this.beginForm(card);
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
