import { loadConfigPart } from "../src/config.js";
import { loadEnvFileIfPresent } from "../src/env-file.js";
import { ConfigError } from "../src/ports/errors.js";

/** `npm run register-commands`: registers /parley for the bot, in one guild when DISCORD_GUILD_ID is set (instant). */
loadEnvFileIfPresent();
let environment: ReturnType<typeof read>;
function read() {
  return loadConfigPart(process.env, ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID", "DISCORD_API_URL", "DISCORD_GUILD_ID"], {
    keys: ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID"],
    purpose: "to register /parley",
  });
}
try {
  environment = read();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : String(error));
  process.exit(1);
}
const { DISCORD_TOKEN, DISCORD_APPLICATION_ID, DISCORD_API_URL, DISCORD_GUILD_ID } = environment;
// Imported after the check so a missing variable is reported without loading discord.js.
const { registerParleyCommand } = await import("../adapters/discord/register-commands.js");
const where = await registerParleyCommand({
  token: DISCORD_TOKEN,
  applicationId: DISCORD_APPLICATION_ID,
  apiUrl: DISCORD_API_URL,
  guildId: DISCORD_GUILD_ID,
});
console.log(`/parley registered ${where}.`);
