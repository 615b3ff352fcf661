import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, SocketModeReceiver, webApi } from "@slack/bolt";
import type { AdminHandler, Conversation, ServingAdapter } from "../../src/ports/conversation.js";
import type { HttpRoute } from "../../src/ports/http-route.js";
import type { Logger } from "../../src/ports/logger.js";
import type { AskPlace, CardView, PostCardOptions, ProgressView, ReplyOptions, Settlement } from "../../src/ports/platform-adapter.js";
import type { RichText } from "../../src/ports/rich-text.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { AckFront } from "./ack-front.js";
import { ActorDirectory, errorCode } from "./actor-directory.js";
import { createBoltLogger } from "./bolt-logger.js";
import { cardMetadata, findCardTs, findReplyTs, replyMetadata } from "./card-metadata.js";
import { readCardRef, type SlackCardRef, writeCardRef } from "./card-ref.js";
import { EventAckGate, holdSocketAcks } from "./event-ack-gate.js";
import { httpReceiver, SLACK_EVENTS_PATH } from "./http-receiver.js";
import { mentionedUserIds, modelMessages, splitMrkdwn } from "./model-message.js";
import { placeSlackAsk } from "./place-ask.js";
import { postingClient, postOnce } from "./post-once.js";
import { mentionsRefusedToken, refusedToken } from "./refused-token.js";
import { renderCard } from "./render-card.js";
import { renderSettledCard } from "./render-settled.js";
import { toMrkdwn } from "./slack-dialect.js";
import { SLACK_LIMITS, SLACK_MAX_BODY_BYTES } from "./slack-limits.js";
import { registerListeners } from "./slack-listeners.js";
import { StatusMessages } from "./status-messages.js";
import { searchThread } from "./thread-search.js";
import { ThreadStatus } from "./thread-status.js";

export interface SlackAdapterOptions {
  /** SLACK_BOT_TOKEN; if Slack refuses it (or the app token, SLACK_APP_TOKEN), start() says which, by that name. */
  botToken: string;
  /** Verifies HTTP requests; unused (may be empty) in Socket Mode. */
  signingSecret: string;
  /** An `xapp-` token switches to Socket Mode. */
  appToken?: string | undefined;
  /** The Web API base URL (SLACK_API_URL), used for every call including `apps.connections.open`. */
  apiUrl?: string | undefined;
  port: number;
  host: string;
  logger: Logger;
  /** Web API retries; the default keeps Slack's own (10 over about half an hour). Tests pass a small one. */
  retryConfig?: webApi.RetryOptions;
  /** More routes on the HTTP listener in HTTP mode: /healthz, /readyz and the API. (Socket Mode opens no listener.) */
  routes?: HttpRoute[];
}

/** Slack over Bolt: draws cards and messages, and turns Slack traffic into engine calls. */
export class SlackAdapter implements ServingAdapter {
  readonly platform = "slack";
  private readonly app: App;
  /** Every outbound call goes through this client: the bot token travels only in its Authorization header. */
  private readonly client: webApi.WebClient;
  /** Cards go through this one: it never posts again blind (post-once.ts). */
  private readonly poster: webApi.WebClient;
  private readonly postBackoffMs: number | undefined;
  private readonly actors: ActorDirectory;
  private identity: { botToken: string; botId: string; botUserId: string; teamId: string } | undefined;
  private readonly socketMode: boolean;
  /** Socket Mode's WebSocket client, whose connection state /readyz reports; absent in HTTP mode. */
  private readonly socket: SocketModeReceiver["client"] | undefined;
  private socketUp = false;
  private readonly statusMessages: StatusMessages;
  private readonly gate = new EventAckGate();
  private listeningPort: number | undefined;
  private front: AckFront | undefined;
  private started = false;

  constructor(private readonly options: SlackAdapterOptions) {
    const socketMode = options.appToken !== undefined && options.appToken !== "";
    this.socketMode = socketMode;
    const clientOptions: webApi.WebClientOptions = {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
    };
    // Until started, a refused token is start()'s error to report, not also a log line of Bolt's.
    const logger = createBoltLogger(options.logger, (line) => !this.started && mentionsRefusedToken(line));
    // The same logger Bolt gives its own clients: it drops debug lines, which carry request bodies.
    this.client = new webApi.WebClient(options.botToken, { ...clientOptions, logger });
    this.poster = postingClient(options.botToken, { ...clientOptions, logger });
    this.postBackoffMs = options.retryConfig?.minTimeout;
    // Built here rather than by Bolt (socketMode: true, the same options) to watch its connection for /readyz.
    const socketReceiver = socketMode
      ? new SocketModeReceiver({ appToken: options.appToken as string, logger, installerOptions: { clientOptions } })
      : undefined;
    this.socket = socketReceiver?.client;
    this.socket?.on("connected", () => (this.socketUp = true));
    if (this.socket) holdSocketAcks(this.socket, this.gate, options.logger);
    for (const state of ["disconnected", "reconnecting"]) this.socket?.on(state, () => (this.socketUp = false));
    this.app = new App({
      // Not `token`: Bolt would send it in the body of its own auth.test. The identity comes from start() instead.
      authorize: async () => {
        if (!this.identity) throw new Error("the Slack adapter has not started");
        return this.identity;
      },
      deferInitialization: true,
      clientOptions,
      logger,
      receiver: socketReceiver ?? httpReceiver(options.signingSecret, logger, options.routes ?? [], this.gate),
    });
    this.actors = new ActorDirectory(this.client, options.logger);
    this.statusMessages = new StatusMessages(this.client, new ThreadStatus(this.client, options.logger), options.logger);
  }

  /** The port actually listened on (useful with port 0). */
  get port(): number | undefined {
    return this.listeningPort;
  }

  async start(conversation: Conversation, admin: AdminHandler): Promise<void> {
    // auth.test runs here, so a bad token is an error the caller can catch, not a crash.
    const identity = await this.client.auth.test().catch((error: unknown) => {
      throw refusedToken(error, "SLACK_BOT_TOKEN");
    });
    if (!identity.bot_id || !identity.user_id || !identity.team_id) throw new Error("auth.test returned no bot identity");
    this.identity = { botToken: this.options.botToken, botId: identity.bot_id, botUserId: identity.user_id, teamId: identity.team_id };
    await this.app.init();
    registerListeners({ app: this.app, conversation, actors: this.actors, logger: this.options.logger, admin, gate: this.gate });
    this.app.error(async (error) => {
      this.options.logger.error({ error: errorCode(error) }, "slack-listener failed");
    });
    if (this.socketMode) {
      // apps.connections.open, with the app token, runs here.
      await this.app.start().catch((error: unknown) => {
        throw refusedToken(error, "SLACK_APP_TOKEN");
      });
      this.started = true;
      return;
    }
    // Bolt listens on loopback only; the public port is the ack front's, on a thread of its own.
    const server = (await this.app.start({ port: 0, host: "127.0.0.1" })) as Server;
    this.started = true;
    try {
      this.front = await AckFront.start({
        host: this.options.host,
        port: this.options.port,
        innerPort: (server.address() as AddressInfo).port,
        path: SLACK_EVENTS_PATH,
        signingSecret: this.options.signingSecret,
        limitBytes: SLACK_MAX_BODY_BYTES,
        logger: this.options.logger,
      });
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.listeningPort = this.front.port;
  }

  async stop(): Promise<void> {
    await this.front?.close();
    this.front = undefined;
    this.gate.releaseAll();
    if (this.started) await this.app.stop();
    this.started = false;
  }

  connected(): boolean {
    return this.started && (this.socket === undefined || this.socketUp);
  }

  async postCard(card: CardView, options: PostCardOptions = {}): Promise<string> {
    const message = renderCard(card);
    const status = await this.statusMessages.replace(options.inPlaceOf, card.conversation, {
      ...message,
      metadata: cardMetadata(card.askId),
    });
    if (status.placed) return writeCardRef({ channel: card.conversation.channel, ts: status.placed });
    // The status message is gone, or the edit's answer was lost: the card is looked for before it is posted.
    const found = options.mayExist || status.failed ? await this.findCard(card) : undefined;
    if (found) {
      // Adopted: drawn again, since the card an earlier process posted shows an earlier deadline.
      await this.client.chat.update({ channel: found.channel, ts: found.ts, text: message.text, blocks: message.blocks });
      this.options.logger.info({ askId: card.askId }, "slack-card adopted");
      return writeCardRef(found);
    }
    const post = async (): Promise<SlackCardRef> => {
      const response = await this.poster.chat.postMessage({
        channel: card.conversation.channel,
        thread_ts: card.conversation.thread,
        text: message.text,
        blocks: message.blocks,
        metadata: cardMetadata(card.askId),
      });
      if (!response.ts) throw new Error("chat.postMessage returned no ts");
      return { channel: response.channel ?? card.conversation.channel, ts: response.ts };
    };
    // A 5xx or a lost answer may hide a card Slack did post: looked for by its metadata before posting again.
    return writeCardRef(await postOnce(post, () => this.findCard(card), this.postBackoffMs));
  }

  /** The card an earlier attempt posted in the ask's thread, found by its metadata (every card is a thread reply). */
  private async findCard(card: CardView): Promise<SlackCardRef | undefined> {
    const botId = this.identity?.botId;
    if (!botId) return undefined;
    const ts = await searchThread(this.client, card.conversation, (messages) => findCardTs(messages, card.askId, botId));
    return ts ? { channel: card.conversation.channel, ts } : undefined;
  }

  async placeAsk(place: AskPlace): Promise<ConversationRef> {
    if (!this.identity) throw new Error("the Slack adapter has not started");
    const clients = { client: this.client, poster: this.poster, botId: this.identity.botId, backoffMs: this.postBackoffMs };
    return placeSlackAsk(clients, this.identity.teamId, place);
  }

  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    const reference = readCardRef(card.cardRef);
    if (!reference) {
      this.options.logger.warn({ askId: card.askId }, "slack-card-settle skipped: no card reference");
      return;
    }
    const message = renderSettledCard(card, settlement);
    await this.client.chat.update({ channel: reference.channel, ts: reference.ts, text: message.text, blocks: message.blocks });
  }

  async postMessage(conversation: ConversationRef, markdown: string, options: ReplyOptions = {}): Promise<void> {
    const { replyKey } = options;
    // A re-post after a crash: an answer that went out before it is not posted twice.
    if (replyKey && options.mayExist && (await this.findReply(conversation, replyKey))) return;
    const names = new Map<string, string>();
    await Promise.all(
      mentionedUserIds(markdown).map(async (id) => {
        const actor = await this.actors.get(id).catch(() => undefined);
        if (actor?.name) names.set(id, actor.name);
      }),
    );
    for (const [index, message] of modelMessages(markdown, names).entries()) {
      // Each part of a final answer is marked on its own, so a part whose answer was lost is looked for, not doubled.
      const partKey = replyKey && (index === 0 ? replyKey : `${replyKey}#${index}`);
      const params = {
        channel: conversation.channel,
        thread_ts: conversation.thread,
        text: message.text,
        blocks: message.blocks as webApi.KnownBlock[],
        unfurl_links: false,
        ...(partKey ? { metadata: replyMetadata(partKey) } : {}),
      };
      if (index === 0) {
        const { text, blocks, metadata } = params;
        const status = await this.statusMessages.replace(options.inPlaceOf, conversation, {
          text,
          blocks,
          ...(metadata ? { metadata } : {}),
        });
        // A failed edit may have landed: a marked part is looked for before it is posted.
        if (status.placed || (status.failed && partKey && (await this.findReply(conversation, partKey)))) continue;
      }
      if (!partKey) {
        await this.client.chat.postMessage(params);
        continue;
      }
      await postOnce(
        async () => (await this.poster.chat.postMessage(params)).ts,
        () => this.findReply(conversation, partKey),
        this.postBackoffMs,
      );
    }
  }

  /** A message of a final answer already in the thread, by its metadata. */
  private async findReply(conversation: ConversationRef, replyKey: string): Promise<string | undefined> {
    const botId = this.identity?.botId;
    if (!botId) return undefined;
    return searchThread(this.client, conversation, (messages) => findReplyTs(messages, replyKey, botId));
  }

  async postNotice(conversation: ConversationRef, text: RichText): Promise<void> {
    for (const piece of splitMrkdwn(toMrkdwn(text), SLACK_LIMITS.messageTextChars)) {
      await this.client.chat.postMessage({
        channel: conversation.channel,
        thread_ts: conversation.thread,
        text: piece,
        unfurl_links: false,
      });
    }
  }

  async notifyPrivately(conversation: ConversationRef, userId: string, text: RichText): Promise<void> {
    await this.client.chat.postEphemeral({
      channel: conversation.channel,
      user: userId,
      thread_ts: conversation.thread,
      text: toMrkdwn(text),
    });
  }

  async showProgress(progress: ProgressView): Promise<void> {
    await this.statusMessages.show(progress);
  }
}
