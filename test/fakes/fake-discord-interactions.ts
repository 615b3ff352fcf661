import { type FakeUser, memberObject, PERMISSIONS, userObject } from "./fake-discord-payloads.js";

type Json = Record<string, unknown>;
export type InteractionKind = "command" | "component" | "modal";

const TYPES: Record<InteractionKind, number> = { command: 2, component: 3, modal: 5 };

/** An INTERACTION_CREATE payload with the fields discord.js needs (sdk-notes): missing ones make it drop the event. */
export function interactionPayload(fields: {
  id: string;
  token: string;
  kind: InteractionKind;
  data: Json;
  user: FakeUser;
  channel: Json;
  applicationId: string;
  message?: Json;
}): Json {
  const guildId = fields.channel.guild_id as string | undefined;
  const permissions = fields.user.admin ? PERMISSIONS.admin : PERMISSIONS.member;
  return {
    id: fields.id,
    application_id: fields.applicationId,
    type: TYPES[fields.kind],
    data: fields.data,
    token: fields.token,
    version: 1,
    channel_id: fields.channel.id,
    channel: fields.channel,
    ...(guildId
      ? { guild_id: guildId, guild_locale: "en-US", member: { ...memberObject(fields.user, true), permissions }, context: 0 }
      : { user: userObject(fields.user), context: 1 }),
    app_permissions: PERMISSIONS.bot,
    locale: "en-US",
    entitlements: [],
    authorizing_integration_owners: guildId ? { "0": guildId } : { "1": fields.user.id },
    attachment_size_limit: 10_485_760,
    ...(fields.message ? { message: fields.message } : {}),
  };
}
