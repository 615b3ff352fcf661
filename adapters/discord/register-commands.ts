import { REST, Routes } from "discord.js";
import { parleyCommandDefinition } from "./parley-command.js";

/**
 * Puts /parley in place (a PUT replaces the application's commands, so running it twice is harmless).
 * A guild command appears at once; a global one can take a while to reach every client.
 */
export async function registerParleyCommand(options: {
  token: string;
  applicationId: string;
  apiUrl?: string | undefined;
  guildId?: string | undefined;
}): Promise<string> {
  const rest = new REST({ api: options.apiUrl ?? "https://discord.com/api" }).setToken(options.token);
  const route = options.guildId
    ? Routes.applicationGuildCommands(options.applicationId, options.guildId)
    : Routes.applicationCommands(options.applicationId);
  await rest.put(route, { body: [parleyCommandDefinition()] });
  return options.guildId ? `in guild ${options.guildId}` : "globally";
}
