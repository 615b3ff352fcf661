import { type BaseInteraction, type Channel, ChannelType, type Message, PermissionFlagsBits } from "discord.js";
import type { InteractionFacts } from "./parse-actor.js";
import type { MessageFacts } from "./parse-message.js";

/** Reads what routing needs off a discord.js Message; everything else stays in discord.js. */
export function messageFacts(message: Message, botId: string): MessageFacts {
  const channel = message.channel as Channel | null;
  const reference = message.reference?.messageId;
  const referenced = reference ? message.channel?.messages.cache.get(reference) : undefined;
  return {
    id: message.id,
    channelId: message.channelId,
    guildId: message.guildId,
    channelKind: channelKind(channel),
    parentId: channel?.isThread() ? channel.parentId : null,
    author: {
      id: message.author.id,
      name: message.member?.displayName ?? message.author.globalName ?? message.author.username,
      isBot: message.author.bot,
      isAdmin: message.member?.permissions.has(PermissionFlagsBits.ManageGuild) ?? false,
    },
    content: message.content ?? "",
    mentionsBot: message.mentions.users.has(botId),
    repliesToBot: message.mentions.repliedUser?.id === botId || referenced?.author.id === botId,
  };
}

/** Reads the author, their Manage Server permission and the channel off any interaction. */
export function interactionFacts(interaction: BaseInteraction): InteractionFacts {
  const channel = interaction.channel as Channel | null;
  return {
    userId: interaction.user.id,
    name: interaction.user.globalName ?? interaction.user.username,
    hasManageGuild: interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false,
    guildId: interaction.guildId,
    channelId: interaction.channelId,
    channelKind: channelKind(channel),
    parentId: channel?.isThread() ? channel.parentId : null,
  };
}

function channelKind(channel: Channel | null): MessageFacts["channelKind"] {
  if (!channel) return "other";
  if (channel.type === ChannelType.DM) return "dm";
  if (channel.isThread()) return "thread";
  if (channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement) return "text";
  return "other";
}

/** What may be logged about a failed Discord call: never its request body, which can hold answers. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const details = error as Error & { code?: unknown; status?: unknown; method?: unknown; url?: unknown };
    return { name: error.name, message: error.message, code: details.code, status: details.status, method: details.method };
  }
  return { message: String(error) };
}
