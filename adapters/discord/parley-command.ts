import {
  ApplicationCommandOptionType,
  type ChatInputCommandInteraction,
  InteractionContextType,
  MessageFlags,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  SlashCommandBuilder,
} from "discord.js";
import type { Actor, Engine } from "../../src/engine/engine.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { interactionFacts } from "./discord-facts.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";
import { actorFrom, conversationFrom } from "./parse-actor.js";

export const PARLEY_COMMAND_NAME = "parley";
export const COMMAND_OPTION = "command";

/** Runs an admin command line such as "sessions pending"; the core owns what the commands do. */
export type CommandHandler = (command: { text: string; actor: Actor; conversation: ConversationRef | null }) => Promise<{ text: string }>;

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

/** Answers privately; checks admin at run time too, since a server admin can widen the default permission. */
export async function runParleyCommand(
  interaction: ChatInputCommandInteraction,
  engine: Engine,
  onCommand?: CommandHandler,
): Promise<void> {
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const facts = interactionFacts(interaction);
  const actor = actorFrom(facts);
  let text: string;
  if (!engine.isAdmin(actor)) text = "🔒 /parley is for admins: it needs the Manage Server permission.";
  else if (!onCommand) text = "admin commands are not available";
  else {
    const line = commandLine(interaction.options.data);
    text = (await onCommand({ text: line, actor, conversation: conversationFrom(facts) })).text;
  }
  await interaction.editReply({ content: truncate(text, DISCORD_LIMITS.contentChars), allowedMentions: { parse: [] } });
}
