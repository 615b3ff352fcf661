import { z } from "zod";

/** `npm run register-commands`: registers /parley for the bot, in one guild when DISCORD_GUILD_ID is set (instant). */
const environment = z
  .object({
    DISCORD_TOKEN: z.string().min(1, "DISCORD_TOKEN is required"),
    DISCORD_APPLICATION_ID: z.string().regex(/^\d+$/, "DISCORD_APPLICATION_ID must be the application's numeric id"),
    DISCORD_API_URL: z.url().optional(),
    DISCORD_GUILD_ID: z.string().regex(/^\d+$/, "DISCORD_GUILD_ID must be a numeric server id").optional(),
  })
  .safeParse(process.env);

if (!environment.success) {
  for (const issue of environment.error.issues) console.error(`${issue.path.join(".")}: ${issue.message}`);
  process.exit(1);
}
const { DISCORD_TOKEN, DISCORD_APPLICATION_ID, DISCORD_API_URL, DISCORD_GUILD_ID } = environment.data;
// Imported after the check so a missing variable is reported without loading discord.js.
const { registerParleyCommand } = await import("../adapters/discord/register-commands.js");
const where = await registerParleyCommand({
  token: DISCORD_TOKEN,
  applicationId: DISCORD_APPLICATION_ID,
  ...(DISCORD_API_URL ? { apiUrl: DISCORD_API_URL } : {}),
  ...(DISCORD_GUILD_ID ? { guildId: DISCORD_GUILD_ID } : {}),
});
console.log(`/parley registered ${where}.`);
