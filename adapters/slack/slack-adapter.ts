import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { App, type webApi } from "@slack/bolt";
import type { Engine } from "../../src/engine/engine.js";
import type { Logger } from "../../src/logger.js";
import type { CardView, PlatformAdapter, ProgressView, Settlement } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { ActorDirectory, errorCode } from "./actor-directory.js";
import { createBoltLogger } from "./bolt-logger.js";
import { readCardRef, writeCardRef } from "./card-ref.js";
import { markdownToMrkdwn, splitMrkdwn } from "./markdown-to-mrkdwn.js";
import { renderCard } from "./render-card.js";
import { renderProgress } from "./render-progress.js";
import { renderSettledCard } from "./render-settled.js";
import type { SlackCommandHandler } from "./slack-command.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { registerListeners } from "./slack-listeners.js";

export interface SlackAdapterOptions {
  botToken: string;
  /** Verifies HTTP requests; unused (may be empty) in Socket Mode. */
  signingSecret: string;
  /** An `xapp-` token switches to Socket Mode. */
  appToken?: string;
  /** The Web API base URL (SLACK_API_URL), used for every call including `apps.connections.open`. */
  apiUrl?: string;
  port: number;
  host: string;
  logger: Logger;
  onCommand?: SlackCommandHandler;
  /** Web API retries; the default keeps Slack's own (10 over about half an hour). Tests pass a small one. */
  retryConfig?: webApi.RetryOptions;
}

const HEALTH_PATH = "/healthz";

/** Slack over Bolt: draws cards and messages, and turns Slack traffic into engine calls. */
export class SlackAdapter implements PlatformAdapter {
  readonly platform = "slack";
  private readonly app: App;
  private readonly actors: ActorDirectory;
  private readonly progressMessages = new Map<string, Promise<string | undefined>>();
  private readonly socketMode: boolean;
  private healthServer: Server | undefined;
  private listeningPort: number | undefined;
  private started = false;

  constructor(private readonly options: SlackAdapterOptions) {
    const socketMode = options.appToken !== undefined && options.appToken !== "";
    this.socketMode = socketMode;
    const clientOptions: webApi.WebClientOptions = {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
    };
    this.app = new App({
      token: options.botToken,
      signingSecret: options.signingSecret,
      // auth.test runs in start(), so a bad token is an error the caller can catch, not a crash.
      deferInitialization: true,
      clientOptions,
      logger: createBoltLogger(options.logger),
      ...(socketMode
        ? { socketMode: true, appToken: options.appToken }
        : { customRoutes: [{ path: HEALTH_PATH, method: ["GET"], handler: (_request, response) => answerHealth(response) }] }),
    });
    this.actors = new ActorDirectory(this.app.client, options.logger);
  }

  /** The port actually listened on (useful with port 0). */
  get port(): number | undefined {
    return this.listeningPort;
  }

  async start(engine: Engine): Promise<void> {
    await this.app.init();
    registerListeners({ app: this.app, engine, actors: this.actors, logger: this.options.logger, onCommand: this.options.onCommand });
    this.app.error(async (error) => {
      this.options.logger.error({ error: errorCode(error) }, "slack-listener failed");
    });
    if (this.socketMode) {
      await this.app.start();
      this.started = true;
      // Socket Mode needs no HTTP listener, but a load balancer still wants /healthz.
      const health = createServer((request, response) => {
        if (request.method === "GET" && request.url === HEALTH_PATH) answerHealth(response);
        else response.writeHead(404).end();
      });
      this.healthServer = health;
      await new Promise<void>((resolve, reject) => {
        health.once("error", reject);
        health.listen(this.options.port, this.options.host, () => resolve());
      });
      this.listeningPort = (health.address() as AddressInfo).port;
      return;
    }
    const server = (await this.app.start({ port: this.options.port, host: this.options.host })) as Server;
    this.started = true;
    this.listeningPort = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (this.started) await this.app.stop();
    this.started = false;
    const health = this.healthServer;
    this.healthServer = undefined;
    if (health?.listening) await new Promise<void>((resolve) => health.close(() => resolve()));
  }

  async postCard(card: CardView): Promise<string> {
    const message = renderCard(card);
    const response = await this.app.client.chat.postMessage({
      channel: card.conversation.channel,
      thread_ts: card.conversation.thread,
      text: message.text,
      blocks: message.blocks,
    });
    if (!response.ts) throw new Error("chat.postMessage returned no ts");
    return writeCardRef({ channel: response.channel ?? card.conversation.channel, ts: response.ts });
  }

  async settleCard(card: CardView, settlement: Settlement): Promise<void> {
    const reference = readCardRef(card.cardRef);
    if (!reference) {
      this.options.logger.warn({ askId: card.askId }, "slack-card-settle skipped: no card reference");
      return;
    }
    const message = renderSettledCard(card, settlement);
    await this.app.client.chat.update({ channel: reference.channel, ts: reference.ts, text: message.text, blocks: message.blocks });
  }

  async postMessage(conversation: ConversationRef, markdown: string): Promise<void> {
    for (const piece of splitMrkdwn(markdownToMrkdwn(markdown), SLACK_LIMITS.messageTextChars)) {
      await this.app.client.chat.postMessage({
        channel: conversation.channel,
        thread_ts: conversation.thread,
        text: piece,
        unfurl_links: false,
      });
    }
  }

  async notifyPrivately(conversation: ConversationRef, userId: string, text: string): Promise<void> {
    await this.app.client.chat.postEphemeral({ channel: conversation.channel, user: userId, thread_ts: conversation.thread, text });
  }

  async showProgress(progress: ProgressView): Promise<void> {
    const message = renderProgress(progress);
    const previous = this.progressMessages.get(progress.turnKey);
    if (previous === undefined || progress.done) await this.setThreadStatus(progress.conversation, progress.done ? "" : "is thinking…");
    const { channel, thread } = progress.conversation;
    const posted = (async () => {
      const ts = await previous;
      if (ts) {
        await this.app.client.chat.update({ channel, ts, text: message.text, blocks: message.blocks });
        return ts;
      }
      const response = await this.app.client.chat.postMessage({ channel, thread_ts: thread, text: message.text, blocks: message.blocks });
      return response.ts;
    })();
    if (progress.done) this.progressMessages.delete(progress.turnKey);
    else
      this.progressMessages.set(
        progress.turnKey,
        posted.catch(() => undefined),
      );
    await posted;
  }

  /** The "is thinking…" line under the thread; Slack refuses it outside assistant threads, which is fine. */
  private async setThreadStatus(conversation: ConversationRef, status: string): Promise<void> {
    try {
      await this.app.client.assistant.threads.setStatus({ channel_id: conversation.channel, thread_ts: conversation.thread, status });
    } catch (error) {
      this.options.logger.debug({ error: errorCode(error) }, "slack-thread-status refused");
    }
  }
}

function answerHealth(response: import("node:http").ServerResponse): void {
  response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
}
