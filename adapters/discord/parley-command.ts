import {
  ApplicationCommandOptionType,
  type ChatInputCommandInteraction,
  InteractionContextType,
  MessageFlags,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  SlashCommandBuilder,
} from "discord.js";
import type { AdminHandler } from "../../src/ports/conversation.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import { interactionFacts } from "./discord-facts.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";
import { actorFrom, conversationFrom } from "./parse-actor.js";

export const PARLEY_COMMAND_NAME = "parley";
export const COMMAND_OPTION = "command";

/** Discord's words for "only admins": who counts as one here. */
export const DISCORD_ADMIN_REFUSAL = "🔒 /parley is for admins: it needs the Manage Server permission.";

/** `/parley command:<line>`, hidden from members without Manage Server (server admins can widen it per role). */
export function parleyCommandDefinition(): RESTPostAPIChatInputApplicationCommandsJSONBody {
  return new SlashCommandBuilder()
    .setName(PARLEY_COMMAND_NAME)
    .setDescription("Parley admin commands")
    .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
    .setContexts(InteractionContextType.Guild)
    .addStringOption((option) =>
      option
        .setName(COMMAND_OPTION)
        .setDescription("sessions [pending|running|all], show <session>, cancel <id>, answer <ask> <value>, stats, config …")
        .setRequired(true)
        .setMaxLength(500),
    )
    .toJSON();
}

/** Joins a chat-input command's subcommands and options into one command line. */
export function commandLine(options: ReadonlyArray<{ name: string; type: number; value?: unknown; options?: unknown }>): string {
  const words: string[] = [];
  for (const option of options) {
    if (option.type === ApplicationCommandOptionType.Subcommand || option.type === ApplicationCommandOptionType.SubcommandGroup) {
      words.push(option.name, commandLine((option.options ?? []) as typeof options));
    } else if (option.value !== undefined) words.push(String(option.value));
  }
  return words.filter((word) => word !== "").join(" ");
}

/**
 * Answers privately. The core checks admin at run time and audits a refusal: a server admin can widen the
 * command's default permission, so its visibility proves nothing.
 */
export async function runParleyCommand(interaction: ChatInputCommandInteraction, admin: AdminHandler): Promise<void> {
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const facts = interactionFacts(interaction);
  const line = commandLine(interaction.options.data);
  const reply = await admin({ text: line, actor: actorFrom(facts), conversation: conversationFrom(facts) });
  const text = reply.kind === "refused" ? DISCORD_ADMIN_REFUSAL : toDiscordMarkdown(reply.text);
  await interaction.editReply({ content: truncate(text, DISCORD_LIMITS.contentChars), allowedMentions: { parse: [] } });
}
