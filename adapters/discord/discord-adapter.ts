import {
  type APIMessage,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  type Interaction,
  type Message,
  Partials,
  Routes,
  Status,
  ThreadAutoArchiveDuration,
} from "discord.js";
import type { AdminHandler, Conversation, ServingAdapter } from "../../src/ports/conversation.js";
import type { Logger } from "../../src/ports/logger.js";
import type { AskPlace, CardView, PostCardOptions, ProgressView, ReplyOptions, Settlement } from "../../src/ports/platform-adapter.js";
import type { RichText } from "../../src/ports/rich-text.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { AnswerDrafts } from "./answer-drafts.js";
import { cardNonce, findCardMessageId, replyNonce, textsSince } from "./card-lookup.js";
import { type DiscordCardRef, readCardRef, writeCardRef } from "./card-ref.js";
import { catchUp } from "./catch-up.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import { describeError, messageFacts } from "./discord-facts.js";
import { gatewayRefusal, loginRefusal } from "./gateway-refusal.js";
import { InteractionRouter } from "./interaction-router.js";
import { PARLEY_COMMAND_NAME, runParleyCommand } from "./parley-command.js";
import { PLATFORM, routeMessage } from "./parse-message.js";
import { placeDiscordAsk } from "./place-ask.js";
import { type DiscordMessageBody, renderCard } from "./render-card.js";
import { renderSettledCard } from "./render-settlement.js";
import { SeenIds } from "./seen-ids.js";
import { splitMessage } from "./split-message.js";
import { StatusMessages } from "./status-messages.js";

export interface DiscordAdapterOptions {
  token: string;
  applicationId: string;
  /** REST base, `https://discord.com/api` by default; the gateway URL is discovered through `GET /gateway/bot`. */
  apiUrl?: string | undefined;
  /** The guild `/parley` is registered in for instant updates; see scripts/register-commands.ts. */
  guildId?: string | undefined;
  logger: Logger;
  /** Ask for the privileged MessageContent intent (default true). Without it, mentions and replies to the bot still work. */
  messageContent?: boolean;
}

/** Discord's error for "a thread has already been created for this message": a replayed mention. */
const THREAD_ALREADY_EXISTS = 160004;
const NO_MENTIONS = { parse: [] as [] };
/** A card being looked for is among its thread's newest messages; Discord pages them by 100. */
const CARD_SEARCH_PAGES = 3;
const CARD_SEARCH_PAGE_SIZE = 100;

/** Discord through discord.js: gateway events in, REST out. Routing and rendering live in pure modules. */
export class DiscordAdapter implements ServingAdapter {
  readonly platform = PLATFORM;
  private readonly client: Client;
  private readonly drafts = new AnswerDrafts();
  private readonly seenInteractions = new SeenIds();
  private readonly statusMessages: StatusMessages;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: DiscordAdapterOptions) {
    const intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
    if (options.messageContent !== false) intents.push(GatewayIntentBits.MessageContent);
    this.client = new Client({
      intents,
      // DM channels are not cached at start: without this partial their messages are dropped.
      partials: [Partials.Channel],
      rest: { api: options.apiUrl ?? "https://discord.com/api" },
      allowedMentions: NO_MENTIONS,
    });
    this.statusMessages = new StatusMessages(this.client.rest);
  }

  /** Logs in, wires gateway events to the core, and resolves once the guilds have arrived. */
  async start(conversation: Conversation, admin: AdminHandler): Promise<void> {
    const router = new InteractionRouter(conversation, this.drafts);
    this.client.on(Events.MessageCreate, (message) => this.track(() => this.onMessage(conversation, message)));
    this.client.on(Events.InteractionCreate, (interaction) => this.track(() => this.onInteraction(admin, router, interaction)));
    this.client.on(Events.Error, (error) => this.options.logger.error({ err: describeError(error) }, "discord-client error"));
    try {
      await new Promise<void>((resolve, reject) => {
        // A shard that disconnects for good (a refused intent or token) never becomes ready.
        const refused = ({ code }: { code: number }) => reject(gatewayRefusal(code));
        this.client.once(Events.ShardDisconnect, refused);
        this.client.once(Events.ClientReady, () => {
          this.client.off(Events.ShardDisconnect, refused);
          resolve();
        });
        this.client.login(this.options.token).catch((error: unknown) => reject(loginRefusal(error)));
      });
    } catch (error) {
      await this.client.destroy();
      throw error;
    }
    this.options.logger.info({ user: this.client.user?.id }, "discord-ready");
    await catchUp(this.client, conversation, (message) => this.onMessage(conversation, message), this.options.logger);
  }

  async stop(): Promise<void> {
    await this.idle();
    await this.client.destroy();
  }

  connected(): boolean {
    // The manager says Ready once; a shard that dropped and is resuming says so itself.
    return this.client.isReady() && this.client.ws.shards.every((shard) => shard.status === Status.Ready);
  }

  /** Resolves when every gateway event received so far has been handled. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async postCard(card: CardView, options: PostCardOptions = {}): Promise<string> {
    const body = renderCard(card, { plainReplies: this.options.messageContent !== false });
    const placed = await this.statusMessages.replace(options.inPlaceOf, body);
    if (placed) return writeCardRef(placed);
    const found = options.mayExist ? await this.findCard(card) : undefined;
    if (found) {
      // Adopted: drawn again, since the card an earlier process posted shows an earlier deadline.
      await this.client.rest.patch(Routes.channelMessage(found.channelId, found.messageId), { body });
      this.options.logger.info({ askId: card.askId }, "discord-card adopted");
      return writeCardRef(found);
    }
    // Within Discord's nonce window a second post of the same card returns the first message instead.
    const message = await this.send(card.conversation.thread, { ...body, nonce: cardNonce(card.askId), enforce_nonce: true });
    return writeCardRef({ channelId: message.channel_id, messageId: message.id });
  }

  /** The card an earlier attempt posted in the ask's thread, found by its components, beyond the nonce window. */
  private async findCard(card: CardView): Promise<DiscordCardRef | undefined> {
    const botId = this.client.user?.id;
    if (!botId) return undefined;
    const channelId = card.conversation.thread;
    let before: string | undefined;
    for (let page = 0; page < CARD_SEARCH_PAGES; page++) {
      const messages = await this.recentMessages(channelId, before);
      const messageId = findCardMessageId(messages, card.askId, botId);
      if (messageId) return { channelId, messageId };
      if (messages.length < CARD_SEARCH_PAGE_SIZE) return undefined;
      before = messages.at(-1)?.id;
    }
    return undefined;
  }

  /** A page of a channel's newest messages (before `before`); none without Read Message History. */
  private async recentMessages(channelId: string, before?: string): Promise<APIMessage[]> {
    const query = new URLSearchParams({ limit: String(CARD_SEARCH_PAGE_SIZE), ...(before ? { before } : {}) });
    try {
      return (await this.client.rest.get(Routes.channelMessages(channelId), { query })) as APIMessage[];
    } catch (error) {
      // Without Read Message History the nonce is the only guard left; anything else is retried by the sweeper.
      if (error instanceof DiscordAPIError && error.status === 403) return [];
      throw error;
    }
  }

  /** A bot REST edit, not the interaction webhook: it still works after the 15-minute interaction token expired. */
  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    this.drafts.forget(card.askId);
    const reference = readCardRef(card.cardRef);
    if (!reference) {
      if (card.cardRef !== null) this.options.logger.warn({ askId: card.askId }, "discord-card-settle skipped: unreadable card reference");
      return;
    }
    await this.client.rest.patch(Routes.channelMessage(reference.channelId, reference.messageId), {
      body: renderSettledCard(card, settlement),
    });
  }

  async postMessage(conversation: ConversationRef, markdown: string, options: ReplyOptions = {}): Promise<void> {
    const { replyKey, writtenAt } = options;
    const botId = this.client.user?.id;
    // A re-post: the pieces that went out already (one edited into the status line has no nonce) are not sent again.
    const shown =
      options.mayExist && writtenAt !== undefined && botId
        ? textsSince(await this.recentMessages(conversation.thread), botId, writtenAt)
        : new Map<string, number>();
    for (const [piece, content] of splitMessage(markdown).entries()) {
      const copies = shown.get(content) ?? 0;
      if (copies > 0) {
        shown.set(content, copies - 1);
        continue;
      }
      // A turn's answer re-posted after a crash, within Discord's nonce window, returns the message that went out.
      const once = replyKey ? { nonce: replyNonce(replyKey, piece), enforce_nonce: true } : {};
      const body = { content, components: [], allowed_mentions: NO_MENTIONS };
      if (piece === 0 && (await this.statusMessages.replace(options.inPlaceOf, body))) continue;
      await this.send(conversation.thread, { content, allowed_mentions: NO_MENTIONS, ...once });
    }
  }

  /**
   * Discord has no ephemeral message outside an interaction, so the notice is a short reply in the
   * thread that mentions only that person (a DM could be closed, and would lose the context).
   */
  async notifyPrivately(conversation: ConversationRef, userId: string, text: RichText): Promise<void> {
    // A bot cannot whisper in a channel outside an interaction: the note names the person but notifies nobody.
    const content = `<@${userId}> ${toDiscordMarkdown(text)}`;
    await this.send(conversation.thread, { content, allowed_mentions: NO_MENTIONS });
  }

  async postNotice(conversation: ConversationRef, text: RichText): Promise<void> {
    for (const content of splitMessage(toDiscordMarkdown(text)))
      await this.send(conversation.thread, { content, allowed_mentions: NO_MENTIONS });
  }

  async showProgress(progress: ProgressView): Promise<void> {
    await this.statusMessages.show(progress);
  }

  placeAsk(place: AskPlace): Promise<ConversationRef> {
    return placeDiscordAsk(this.client.rest, place, place.title);
  }

  private async send(
    channelId: string,
    body: Partial<DiscordMessageBody> & { nonce?: string; enforce_nonce?: boolean },
  ): Promise<APIMessage> {
    return (await this.client.rest.post(Routes.channelMessages(channelId), { body })) as APIMessage;
  }

  private async onMessage(conversation: Conversation, message: Message): Promise<void> {
    const botId = this.client.user?.id;
    if (!botId) return;
    const route = routeMessage(messageFacts(message, botId), botId);
    if (route.route === "ignore") return;
    // A mention read again (caught up after a restart) may already have its thread: only the message is missing.
    if (route.route === "start-thread" && !message.hasThread) {
      try {
        await message.startThread({ name: route.threadName, autoArchiveDuration: ThreadAutoArchiveDuration.OneDay });
      } catch (error) {
        if (!(error instanceof DiscordAPIError && error.code === THREAD_ALREADY_EXISTS)) {
          this.options.logger.warn({ err: describeError(error), messageId: message.id }, "thread-create failed");
          await message.reply({ content: "I could not start a thread here: I need Create Public Threads.", allowedMentions: NO_MENTIONS });
          return;
        }
      }
    }
    await conversation.handleMessage(route.message);
  }

  private async onInteraction(admin: AdminHandler, router: InteractionRouter, interaction: Interaction): Promise<void> {
    // Gateway RESUME replays events: an interaction answered once must not be answered (or acted on) again.
    if (!this.seenInteractions.add(interaction.id)) return;
    if (interaction.isChatInputCommand() && interaction.commandName === PARLEY_COMMAND_NAME) {
      return runParleyCommand(interaction, admin);
    }
    if (interaction.isButton() || interaction.isStringSelectMenu()) return router.handleComponent(interaction);
    if (interaction.isModalSubmit()) return router.handleModal(interaction);
  }

  private track(handler: () => Promise<void>): void {
    const promise = handler()
      .catch((error: unknown) => this.options.logger.error({ err: describeError(error) }, "discord-event failed"))
      .finally(() => this.inFlight.delete(promise));
    this.inFlight.add(promise);
  }
}
