import { type InteractionKind, interactionPayload } from "./fake-discord-interactions.js";
import { type FakeUser, messageObject, snowflake } from "./fake-discord-payloads.js";
import { CHANNEL_TYPES, FakeDiscordRest, type Json } from "./fake-discord-rest.js";

export type { FakeUser } from "./fake-discord-payloads.js";
export { FAKE_DISCORD_TOKEN } from "./fake-discord-rest.js";

/**
 * A fake Discord REST API and gateway on 127.0.0.1 for discord.js: it records every REST call, keeps messages,
 * threads and interaction responses, dispatches user events, and rejects what Discord would reject (400, 50035).
 */
export class FakeDiscord extends FakeDiscordRest {
  /** A user writes in a channel or thread; without the MessageContent intent Discord blanks what is not exempt. */
  say(user: FakeUser, content: string, options: { channelId?: string; mentionBot?: boolean; replyTo?: string } = {}): string {
    const channel = this.channel(options.channelId ?? this.channelId);
    const id = snowflake();
    const referenced = options.replyTo ? this.messages.get(options.replyTo) : undefined;
    const repliesToBot = (referenced?.author as Json | undefined)?.id === this.bot.id;
    const text = options.mentionBot ? `<@${this.bot.id}> ${content}` : content;
    // Exempt from the intent: DMs, messages that mention the bot, replies to the bot with ping on (the default).
    const visible = this.messageContentIntent || channel.kind === "dm" || options.mentionBot === true || repliesToBot;
    const message = messageObject({
      id,
      channelId: channel.id,
      ...(channel.guildId ? { guildId: channel.guildId } : {}),
      author: user,
      content: visible ? text : "",
      mentions: options.mentionBot || repliesToBot ? [this.bot] : [],
      withMember: true,
      ...(referenced ? { reference: { message_id: options.replyTo, channel_id: channel.id, guild_id: channel.guildId }, referenced } : {}),
    });
    this.messages.set(id, message);
    this.gateway.dispatch("MESSAGE_CREATE", { ...message, channel_type: CHANNEL_TYPES[channel.kind] });
    return id;
  }

  /** A user writes to the bot in a DM; returns the DM channel id. */
  sayInDm(user: FakeUser, content: string): string {
    const channelId = this.dmChannelOf(user);
    this.say(user, content, { channelId });
    return channelId;
  }

  dmChannelOf(user: FakeUser): string {
    for (const channel of this.channels.values()) if (channel.kind === "dm" && channel.recipient?.id === user.id) return channel.id;
    const id = snowflake();
    this.channels.set(id, { id, kind: "dm", recipient: user });
    return id;
  }

  /** A user presses a button on a message (a card, a status message, or an ephemeral message). */
  click(user: FakeUser, message: Json, customId: string): string {
    return this.interact(user, String(message.channel_id), "component", { custom_id: customId, component_type: 2 }, message);
  }

  choose(user: FakeUser, message: Json, customId: string, values: string[]): string {
    return this.interact(user, String(message.channel_id), "component", { custom_id: customId, component_type: 3, values }, message);
  }

  /** Submits the modal the bot showed, with values by component custom id (a string, or select values). */
  submitModal(user: FakeUser, modal: { interactionId: string; data: Json }, values: Record<string, string | string[]>): string {
    const source = this.interactions.get(modal.interactionId);
    if (!source) throw new Error("the modal belongs to no interaction");
    const components = ((modal.data.components ?? []) as Json[]).map((label) => {
      const child = label.component as Json;
      const value = values[String(child.custom_id)];
      return child.type === 3
        ? { type: 18, id: label.id ?? 1, component: { type: 3, custom_id: child.custom_id, values: Array.isArray(value) ? value : [] } }
        : {
            type: 18,
            id: label.id ?? 1,
            component: { type: 4, custom_id: child.custom_id, value: typeof value === "string" ? value : "" },
          };
    });
    const data = { custom_id: modal.data.custom_id, components };
    return this.interact(user, source.channelId, "modal", data, source.message);
  }

  /** Runs `/parley command:<text>`. */
  command(user: FakeUser, text: string, channelId = this.channelId): string {
    const data = { id: snowflake(), name: "parley", type: 1, options: [{ name: "command", type: 3, value: text }] };
    return this.interact(user, channelId, "command", data);
  }

  /** Waits until the bot has answered an interaction's callback. */
  async callbackOf(interactionId: string): Promise<{ type: number; data: Json | undefined }> {
    for (let attempt = 0; attempt < 500; attempt++) {
      const found = this.callbacks.find((callback) => callback.interactionId === interactionId);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`interaction ${interactionId} was never answered`);
  }

  /** Every message in a channel, in order, as it is now (after edits). */
  messagesIn(channelId: string): Json[] {
    return [...this.messages.values()].filter((message) => message.channel_id === channelId);
  }

  botMessagesIn(channelId: string): Json[] {
    return this.messagesIn(channelId).filter((message) => (message.author as Json).id === this.bot.id);
  }

  /** Drops a message as if it had never been created (a post the bot died before sending). */
  forget(id: string): void {
    this.messages.delete(id);
  }

  message(id: string): Json | undefined {
    return this.messages.get(id);
  }

  threadIds(): string[] {
    return [...this.channels.values()].filter((channel) => channel.kind === "thread").map((channel) => channel.id);
  }

  ephemeralsFor(userId: string): Json[] {
    return this.ephemerals.filter((entry) => entry.userId === userId).map((entry) => entry.message);
  }

  private interact(user: FakeUser, channelId: string, kind: InteractionKind, data: Json, message?: Json): string {
    const id = snowflake();
    const token = `token-${id}`;
    this.interactions.set(id, { id, token, user, channelId, ...(message ? { message } : {}) });
    const channel = this.channel(channelId);
    const channelJson = this.channelJson(channel);
    this.gateway.dispatch(
      "INTERACTION_CREATE",
      interactionPayload({
        id,
        token,
        kind,
        data,
        user,
        channel: channelJson,
        applicationId: this.applicationId,
        ...(message ? { message } : {}),
      }),
    );
    return id;
  }
}
