import { ButtonBuilder, ButtonStyle, Client, DiscordAPIError, Events, GatewayIntentBits, REST, Routes } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_DISCORD_TOKEN, FakeDiscord } from "../fakes/fake-discord.js";

let discord: FakeDiscord;

afterEach(async () => {
  await discord.close();
});

describe("the fake Discord API speaks enough Discord for discord.js", () => {
  it("does HELLO, IDENTIFY, READY and GUILD_CREATE, and acknowledges heartbeats", async () => {
    discord = await new FakeDiscord(undefined, { heartbeatIntervalMs: 50 }).start();
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: discord.url } });
    try {
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await client.login(FAKE_DISCORD_TOKEN);
      await ready;
      expect(client.guilds.cache.get(discord.guildId)?.channels.cache.has(discord.channelId)).toBe(true);
      expect(discord.gateway.intents).toBe(GatewayIntentBits.Guilds);
      for (let attempt = 0; attempt < 200 && discord.gateway.heartbeats < 2; attempt++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(discord.gateway.heartbeats).toBeGreaterThanOrEqual(2);
      // A missed ACK makes discord.js drop the connection as a zombie; still connected means every beat was answered.
      expect(discord.gateway.connected).toBe(true);
    } finally {
      await client.destroy();
    }
  });

  it("rejects a row of six buttons with HTTP 400 and code 50035, as Discord does", async () => {
    discord = await new FakeDiscord().start();
    const rest = new REST({ api: discord.url, retries: 0 }).setToken(FAKE_DISCORD_TOKEN);
    const buttons = Array.from({ length: 6 }, (_, index) =>
      new ButtonBuilder().setCustomId(`b${index}`).setLabel(`${index}`).setStyle(ButtonStyle.Secondary).toJSON(),
    );
    const failure = await rest
      .post(Routes.channelMessages(discord.channelId), { body: { content: "x", components: [{ type: 1, components: buttons }] } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DiscordAPIError);
    expect((failure as DiscordAPIError).status).toBe(400);
    expect((failure as DiscordAPIError).code).toBe(50035);
    expect(discord.messagesIn(discord.channelId)).toEqual([]);
  });

  it("refuses a bot call without the token", async () => {
    discord = await new FakeDiscord().start();
    const rest = new REST({ api: discord.url, retries: 0 }).setToken("wrong");
    const failure = await rest.post(Routes.channelMessages(discord.channelId), { body: { content: "x" } }).catch((error: unknown) => error);
    expect((failure as DiscordAPIError).status).toBe(401);
  });
});
