import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type Loopback, listenLoopback } from "../support/loopback.js";
import { FakeDiscordGateway } from "./fake-discord-gateway.js";
import { messageErrors, modalErrors } from "./fake-discord-limits.js";
import {
  dmChannelObject,
  type FakeUser,
  guildObject,
  messageObject,
  snowflake,
  textChannelObject,
  threadObject,
  userObject,
} from "./fake-discord-payloads.js";

export type Json = Record<string, unknown>;

export interface RecordedCall {
  method: string;
  path: string;
  body: Json | undefined;
  status: number;
}
/** A file sent with a message as multipart/form-data, as discord.js sends `files`. */
export interface UploadedFile {
  /** The form field, `files[0]`…; Discord matches it to `attachments[].id` in `payload_json`. */
  field: string;
  name: string;
  contentType: string;
  data: Buffer;
}
/** What one person saw privately: an ephemeral reply, follow-up or deferred-reply edit. */
export interface EphemeralMessage {
  interactionId: string;
  userId: string;
  message: Json;
  /** The files attached to it, whole. */
  files: UploadedFile[];
}
export interface Channel {
  id: string;
  kind: "text" | "thread" | "dm";
  guildId?: string;
  parentId?: string;
  recipient?: FakeUser;
}
export interface Interaction {
  id: string;
  token: string;
  user: FakeUser;
  channelId: string;
  message?: Json;
  deferredEphemeral?: boolean;
}

export const MESSAGE_CONTENT_INTENT = 1 << 15;
/** MESSAGE_CREATE carries `channel_type`; discord.js needs it to build a DM channel it has not cached. */
export const CHANNEL_TYPES = { text: 0, dm: 1, thread: 11 } as const;

/** The REST half of the fake Discord API and the state it shares with the gateway and the event helpers. */
export class FakeDiscordRest {
  readonly bot: FakeUser;
  readonly guildId = snowflake();
  readonly channelId = snowflake();
  readonly calls: RecordedCall[] = [];
  readonly rejections: Array<{ path: string; errors: Record<string, string> }> = [];
  readonly callbacks: Array<{ interactionId: string; type: number; data: Json | undefined }> = [];
  readonly modals: Array<{ interactionId: string; userId: string; data: Json }> = [];
  readonly ephemerals: EphemeralMessage[] = [];
  readonly registeredCommands: Json[] = [];
  readonly gateway: FakeDiscordGateway;
  /**
   * How long a nonce sent with `enforce_nonce` returns the message it first created instead of a new one; Discord
   * says "a few minutes". Tests set it to 0 to act as if the window had passed.
   */
  nonceWindowMs = 5 * 60 * 1000;
  private readonly nonces = new Map<string, { messageId: string; at: number }>();
  protected readonly messages = new Map<string, Json>();
  protected readonly channels = new Map<string, Channel>();
  protected readonly interactions = new Map<string, Interaction>();
  private readonly server: Server;
  private loopback: Loopback | undefined;

  constructor(
    readonly applicationId = snowflake(),
    options: { heartbeatIntervalMs?: number } = {},
  ) {
    this.bot = { id: applicationId, username: "Parley", bot: true };
    this.channels.set(this.channelId, { id: this.channelId, kind: "text", guildId: this.guildId });
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        this.receive(request, Buffer.concat(chunks), response).catch((error: unknown) => {
          response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ message: String(error), code: 50035 }));
        });
      });
    });
    this.gateway = new FakeDiscordGateway(
      this.server,
      () => this.gatewayUrl,
      () => this.readyData(),
      options.heartbeatIntervalMs,
    );
  }

  /** The REST base to give discord.js (`rest.api`); it appends `/v10`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  private get port(): number {
    return this.loopback?.port ?? 0;
  }

  get messageContentIntent(): boolean {
    return (this.gateway.intents & MESSAGE_CONTENT_INTENT) !== 0;
  }

  async start(): Promise<this> {
    this.loopback = await listenLoopback(this.server);
    return this;
  }

  async close(): Promise<void> {
    // The gateway first: its sockets were upgraded out of HTTP, so closing the server cuts none of them and would wait on them.
    await this.gateway.close();
    await this.loopback?.close();
  }

  /**
   * Another text channel of the guild, or a thread in `parentId`; REST knows it (GET /channels/:id, posts), and the
   * next READY lists it; until then the bot does not, as for a channel created after the bot connected.
   */
  addChannel(kind: "text" | "thread", parentId?: string): string {
    const id = snowflake();
    this.channels.set(id, { id, kind, guildId: this.guildId, ...(kind === "thread" ? { parentId: parentId ?? this.channelId } : {}) });
    return id;
  }

  private newestMessageIn(channelId: string): string | null {
    let newest: string | null = null;
    for (const message of this.messages.values())
      if (message.channel_id === channelId && (newest === null || BigInt(String(message.id)) > BigInt(newest))) newest = String(message.id);
    return newest;
  }

  protected channel(id: string): Channel {
    const channel = this.channels.get(id);
    if (!channel) throw new Error(`fake discord: no channel ${id}`);
    return channel;
  }

  protected channelJson(channel: Channel): Json {
    if (channel.kind === "dm") return dmChannelObject(channel.id, channel.recipient!);
    if (channel.kind === "thread") return threadObject(channel.id, channel.guildId!, channel.parentId!, "thread", this.bot.id);
    return textChannelObject(channel.id, channel.guildId!, "general");
  }

  /** READY lists the guild's text channels as they are when it is sent, each with the id of its newest message. */
  private readyData(): { user: Json; guilds: Json[] } {
    const threads = [...this.channels.values()].filter((channel) => channel.kind === "thread").map((channel) => this.channelJson(channel));
    const texts = [...this.channels.values()]
      .filter((channel) => channel.kind === "text")
      .map((channel) => textChannelObject(channel.id, this.guildId, "general", this.newestMessageIn(channel.id)));
    const guild = guildObject(this.guildId, snowflake(), texts, threads, this.bot);
    return { user: { ...userObject(this.bot), bot: true, verified: true, mfa_enabled: false }, guilds: [guild] };
  }

  /** JSON bodies, or multipart ones (a message with files): `payload_json` is the body, the other parts are files. */
  private async receive(request: IncomingMessage, raw: Buffer, response: ServerResponse): Promise<void> {
    const contentType = request.headers["content-type"] ?? "";
    if (!contentType.startsWith("multipart/form-data")) {
      this.handle(request, raw.length > 0 ? (JSON.parse(raw.toString("utf8")) as Json) : undefined, [], response);
      return;
    }
    const form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData();
    const files: UploadedFile[] = [];
    let body: Json | undefined;
    for (const [field, value] of form.entries()) {
      if (typeof value === "string") {
        if (field === "payload_json") body = JSON.parse(value) as Json;
        continue;
      }
      files.push({ field, name: value.name, contentType: value.type, data: Buffer.from(await value.arrayBuffer()) });
    }
    this.handle(request, body, files, response);
  }

  private handle(request: IncomingMessage, body: Json | undefined, files: UploadedFile[], response: ServerResponse): void {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, "");
    const reply = (status: number, json?: unknown) => {
      this.calls.push({ method: request.method ?? "", path, body, status });
      if (json === undefined) response.writeHead(status).end();
      else response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    };
    const isInteraction = path.startsWith("/interactions/") || path.startsWith("/webhooks/");
    if (!isInteraction && request.headers.authorization !== `Bot ${FAKE_DISCORD_TOKEN}`) {
      reply(401, { message: "401: Unauthorized", code: 0 });
      return;
    }
    // Discord reads an id in the path as a snowflake: anything else is a 400 (50035), not a 404.
    const pathId = /^\/channels\/([^/]+)/.exec(path)?.[1];
    if (pathId !== undefined && !/^\d+$/.test(pathId)) {
      const coerce = { code: "NUMBER_TYPE_COERCE", message: `Value "${pathId}" is not snowflake.` };
      reply(400, { message: "Invalid Form Body", code: 50035, errors: { channel_id: { _errors: [coerce] } } });
      return;
    }
    const route = routeOf(request.method ?? "", path);
    const errors = route.validate?.(body ?? {}) ?? {};
    if (Object.keys(errors).length > 0) {
      this.rejections.push({ path, errors });
      reply(400, { message: "Invalid Form Body", code: 50035, errors });
      return;
    }
    const result = this.serve(route.name, route.params, body, files, url.searchParams);
    reply(result.status, result.json);
  }

  private serve(
    name: string,
    params: string[],
    body: Json | undefined,
    files: UploadedFile[],
    query: URLSearchParams,
  ): { status: number; json?: unknown } {
    const [first = "", second = ""] = params;
    switch (name) {
      case "gateway":
        return {
          status: 200,
          json: {
            url: this.gatewayUrl,
            shards: 1,
            session_start_limit: { total: 1000, remaining: 999, reset_after: 60_000, max_concurrency: 1 },
          },
        };
      case "post-message":
        return { status: 200, json: this.postMessage(first, body ?? {}) };
      case "get-channel": {
        const channel = this.channels.get(first);
        return channel
          ? { status: 200, json: this.channelJson(channel) }
          : { status: 404, json: { message: "Unknown Channel", code: 10003 } };
      }
      case "list-messages":
        return { status: 200, json: this.listMessages(first, query) };
      case "edit-message": {
        const message = this.messages.get(second);
        if (!message) return { status: 404, json: { message: "Unknown Message", code: 10008 } };
        Object.assign(message, pickMessageFields(body ?? {}), { edited_timestamp: new Date().toISOString() });
        return { status: 200, json: message };
      }
      case "start-thread": {
        // A thread starts from a message of a text channel, never of a thread or a DM.
        if (this.channels.get(first)?.kind !== "text")
          return { status: 400, json: { message: "Cannot execute action on this channel type", code: 50024 } };
        if (this.channels.has(second))
          return { status: 400, json: { message: "A thread has already been created for this message", code: 160004 } };
        const thread = threadObject(second, this.guildId, first, String(body?.name ?? "thread"), this.bot.id);
        this.channels.set(second, { id: second, kind: "thread", guildId: this.guildId, parentId: first });
        // Discord flags the starter message HAS_THREAD (1 << 5).
        const starter = this.messages.get(second);
        if (starter) starter.flags = Number(starter.flags ?? 0) | (1 << 5);
        this.gateway.dispatch("THREAD_CREATE", { ...thread, newly_created: true });
        return { status: 201, json: thread };
      }
      case "typing":
        return { status: 204 };
      case "callback":
        return this.interactionCallback(first, second, body ?? {}, files);
      case "edit-original":
      case "follow-up":
        return { status: 200, json: this.webhookMessage(name, second, body ?? {}, files) };
      case "commands":
        this.registeredCommands.push(...((body as unknown as Json[]) ?? []));
        return { status: 200, json: body };
      default:
        return { status: 404, json: { message: "404: Not Found", code: 0 } };
    }
  }

  /** A channel's messages newest first, as `GET /channels/:id/messages` pages them (`limit` ≤ 100, `before`, `after`). */
  private listMessages(channelId: string, query: URLSearchParams): Json[] {
    this.channel(channelId);
    const limit = Math.min(Math.max(Number(query.get("limit") ?? 50) || 50, 1), 100);
    const before = query.get("before");
    const after = query.get("after");
    let inChannel = [...this.messages.values()].filter((message) => message.channel_id === channelId).reverse();
    if (before) inChannel = inChannel.filter((message) => BigInt(String(message.id)) < BigInt(before));
    // Discord pages `after` from the oldest side.
    if (after) return inChannel.filter((message) => BigInt(String(message.id)) > BigInt(after)).slice(-limit);
    return inChannel.slice(0, limit);
  }

  private postMessage(channelId: string, body: Json): Json {
    const channel = this.channel(channelId);
    // enforce_nonce: the same author and nonce within the window get the first message back, and nothing is created.
    const nonceKey = typeof body.nonce === "string" || typeof body.nonce === "number" ? `${this.bot.id}:${String(body.nonce)}` : undefined;
    if (nonceKey && body.enforce_nonce === true) {
      const earlier = this.nonces.get(nonceKey);
      const existing = earlier ? this.messages.get(earlier.messageId) : undefined;
      if (earlier && existing && Date.now() - earlier.at < this.nonceWindowMs) return existing;
    }
    const message = messageObject({
      id: snowflake(),
      channelId,
      ...(channel.guildId ? { guildId: channel.guildId } : {}),
      author: this.bot,
      ...pickMessageFields(body),
      content: String(body.content ?? ""),
    } as Parameters<typeof messageObject>[0]);
    if (body.nonce !== undefined) message.nonce = body.nonce;
    this.messages.set(String(message.id), message);
    if (nonceKey) this.nonces.set(nonceKey, { messageId: String(message.id), at: Date.now() });
    this.gateway.dispatch("MESSAGE_CREATE", { ...message, channel_type: CHANNEL_TYPES[channel.kind] });
    return message;
  }

  private interactionCallback(interactionId: string, token: string, body: Json, files: UploadedFile[]): { status: number } {
    const interaction = this.interactions.get(interactionId);
    if (!interaction || interaction.token !== token) return { status: 404 };
    if (this.callbacks.some((callback) => callback.interactionId === interactionId)) return { status: 400 };
    const data = body.data as Json | undefined;
    this.callbacks.push({ interactionId, type: Number(body.type), data });
    const ephemeral = (Number(data?.flags ?? 0) & 64) !== 0;
    if (body.type === 9 && data) this.modals.push({ interactionId, userId: interaction.user.id, data });
    if (body.type === 5 && ephemeral) interaction.deferredEphemeral = true;
    if (body.type === 4 && ephemeral) this.recordEphemeral(interaction, data ?? {}, files);
    if (body.type === 7 && interaction.message) Object.assign(interaction.message, pickMessageFields(data ?? {}));
    return { status: 204 };
  }

  private webhookMessage(kind: string, token: string, body: Json, files: UploadedFile[]): Json {
    const interaction = [...this.interactions.values()].find((candidate) => candidate.token === token);
    if (!interaction) return {};
    const ephemeral = kind === "edit-original" ? interaction.deferredEphemeral === true : (Number(body.flags ?? 0) & 64) !== 0;
    return ephemeral ? this.recordEphemeral(interaction, body, files) : this.postMessage(interaction.channelId, body);
  }

  private recordEphemeral(interaction: Interaction, body: Json, files: UploadedFile[]): Json {
    const message = messageObject({
      id: snowflake(),
      channelId: interaction.channelId,
      author: this.bot,
      content: String(body.content ?? ""),
      components: (body.components as unknown[]) ?? [],
      flags: 64,
    });
    message.attachments = files.map((file) => attachmentObject(file));
    this.ephemerals.push({ interactionId: interaction.id, userId: interaction.user.id, message, files });
    return message;
  }
}

/** An attachment as Discord describes it on a message; the fake serves no CDN, so the URL goes nowhere. */
function attachmentObject(file: UploadedFile): Json {
  const id = snowflake();
  const url = `https://cdn.discordapp.invalid/attachments/${id}/${file.name}`;
  return { id, filename: file.name, size: file.data.length, content_type: file.contentType, url, proxy_url: url };
}

/** The token the fake accepts as `Authorization: Bot <token>`. */
export const FAKE_DISCORD_TOKEN = "fake-discord-token";

function pickMessageFields(body: Json): Json {
  const fields: Json = {};
  if (body.content !== undefined) fields.content = body.content;
  if (body.components !== undefined) fields.components = body.components;
  return fields;
}

type Validate = ((body: Json) => Record<string, string>) | undefined;
function callbackErrors(body: Json): Record<string, string> {
  const data = (body.data ?? {}) as Json;
  if (body.type === 9) return modalErrors(data);
  return body.type === 4 || body.type === 7 ? messageErrors(data) : {};
}

function routeOf(method: string, path: string): { name: string; params: string[]; validate: Validate } {
  const table: Array<[string, RegExp, string, Validate]> = [
    ["GET", /^\/gateway(\/bot)?$/, "gateway", undefined],
    ["POST", /^\/channels\/(\d+)\/messages$/, "post-message", messageErrors],
    ["GET", /^\/channels\/(\d+)\/messages$/, "list-messages", undefined],
    ["GET", /^\/channels\/(\d+)$/, "get-channel", undefined],
    ["PATCH", /^\/channels\/(\d+)\/messages\/(\d+)$/, "edit-message", messageErrors],
    ["POST", /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/, "start-thread", undefined],
    ["POST", /^\/channels\/(\d+)\/typing$/, "typing", undefined],
    ["PATCH", /^\/webhooks\/\d+\/([^/]+)\/messages\/@original$/, "edit-original", messageErrors],
    ["POST", /^\/webhooks\/\d+\/([^/]+)$/, "follow-up", messageErrors],
    ["PUT", /^\/applications\/\d+(?:\/guilds\/\d+)?\/commands$/, "commands", undefined],
  ];
  if (method === "POST" && /^\/interactions\/\d+\/[^/]+\/callback$/.test(path)) {
    const [, , id = "", token = ""] = path.split("/");
    return { name: "callback", params: [id, token], validate: callbackErrors };
  }
  for (const [verb, pattern, name, validate] of table) {
    const match = method === verb ? pattern.exec(path) : null;
    if (!match) continue;
    // Webhook routes carry the token in the second slot, as callbacks do.
    const params = name === "edit-original" || name === "follow-up" ? ["", match[1] ?? ""] : match.slice(1).map((part) => part ?? "");
    return { name, params, validate };
  }
  return { name: "unknown", params: [], validate: undefined };
}
