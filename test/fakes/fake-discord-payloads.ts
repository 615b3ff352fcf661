/** Gateway and REST objects with every field discord.js 14 reads, built for the fake Discord API. */
type Json = Record<string, unknown>;

export interface FakeUser {
  id: string;
  username: string;
  bot?: boolean;
  /** Has Manage Server in the fake guild. */
  admin?: boolean;
}

const EPOCH = 1420070400000n;
let counter = 0n;

/** A fresh snowflake: a timestamp in the top bits keeps them increasing, as Discord's are. */
export function snowflake(): string {
  counter += 1n;
  return String(((BigInt(Date.now()) - EPOCH) << 22n) + (counter % 4096n));
}

export const PERMISSIONS = {
  member: String((1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 16n)),
  admin: String((1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 16n) | (1n << 5n)),
  bot: String((1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 35n) | (1n << 16n)),
};

/** The guild role that carries Manage Server; members with `admin: true` hold it. */
export const ADMIN_ROLE_ID = snowflake();

export function userObject(user: FakeUser): Json {
  return {
    id: user.id,
    username: user.username,
    global_name: user.username,
    discriminator: "0",
    avatar: null,
    bot: user.bot ?? false,
    public_flags: 0,
    flags: 0,
  };
}

/** A guild member as gateway events carry it; MESSAGE_CREATE omits `user`, interactions include it. */
export function memberObject(user: FakeUser, withUser: boolean): Json {
  return {
    ...(withUser ? { user: userObject(user) } : {}),
    nick: null,
    avatar: null,
    roles: user.admin ? [ADMIN_ROLE_ID] : [],
    joined_at: "2026-01-01T00:00:00.000Z",
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  };
}

/** `lastMessageId`: the newest message's id, as READY's channels carry it (discord.js keeps it as `lastMessageId`). */
export function textChannelObject(id: string, guildId: string, name: string, lastMessageId: string | null = null): Json {
  return {
    id,
    type: 0,
    guild_id: guildId,
    name,
    position: 0,
    permission_overwrites: [],
    parent_id: null,
    nsfw: false,
    topic: null,
    last_message_id: lastMessageId,
  };
}

export function threadObject(id: string, guildId: string, parentId: string, name: string, ownerId: string): Json {
  return {
    id,
    type: 11,
    guild_id: guildId,
    parent_id: parentId,
    name,
    owner_id: ownerId,
    last_message_id: null,
    message_count: 0,
    member_count: 1,
    rate_limit_per_user: 0,
    flags: 0,
    thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
    total_message_sent: 0,
  };
}

export function dmChannelObject(id: string, recipient: FakeUser): Json {
  return { id, type: 1, recipients: [userObject(recipient)], last_message_id: null, flags: 0 };
}

export function guildObject(guildId: string, ownerId: string, channels: Json[], threads: Json[], bot: FakeUser): Json {
  return {
    id: guildId,
    name: "Parley test server",
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      {
        id: guildId,
        name: "@everyone",
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: 0,
        permissions: PERMISSIONS.bot,
        managed: false,
        mentionable: false,
        flags: 0,
      },
      {
        id: ADMIN_ROLE_ID,
        name: "Admins",
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: 1,
        permissions: PERMISSIONS.admin,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    preferred_locale: "en-US",
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    safety_alerts_channel_id: null,
    joined_at: "2026-01-01T00:00:00.000Z",
    large: false,
    unavailable: false,
    member_count: 3,
    voice_states: [],
    members: [memberObject(bot, true)],
    channels,
    threads,
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** A message object as REST answers and MESSAGE_CREATE carry it. */
export function messageObject(fields: {
  id: string;
  channelId: string;
  guildId?: string;
  author: FakeUser;
  content: string;
  components?: unknown[];
  mentions?: FakeUser[];
  flags?: number;
  reference?: Json;
  referenced?: Json;
  withMember?: boolean;
}): Json {
  return {
    id: fields.id,
    channel_id: fields.channelId,
    ...(fields.guildId ? { guild_id: fields.guildId } : {}),
    author: userObject(fields.author),
    ...(fields.guildId && fields.withMember ? { member: memberObject(fields.author, false) } : {}),
    content: fields.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: (fields.mentions ?? []).map(userObject),
    mention_roles: [],
    mention_channels: [],
    attachments: [],
    embeds: [],
    reactions: [],
    pinned: false,
    type: fields.reference ? 19 : 0,
    flags: fields.flags ?? 0,
    components: fields.components ?? [],
    ...(fields.reference ? { message_reference: fields.reference, referenced_message: fields.referenced ?? null } : {}),
  };
}
