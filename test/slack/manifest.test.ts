import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const manifestSchema = z.object({
  features: z.object({ slash_commands: z.array(z.object({ command: z.string(), url: z.string() })) }),
  oauth_config: z.object({ scopes: z.object({ bot: z.array(z.string()) }) }),
  settings: z.object({
    event_subscriptions: z.object({ request_url: z.string(), bot_events: z.array(z.string()) }),
    interactivity: z.object({ is_enabled: z.boolean(), request_url: z.string() }),
  }),
});

const manifest = manifestSchema.parse(JSON.parse(readFileSync(new URL("../../slack/manifest.json", import.meta.url), "utf8")));

describe("slack/manifest.json", () => {
  it("creates an app in one paste: every scope the adapter's Web API calls need", () => {
    // chat.postMessage/update/postEphemeral and assistant.threads.setStatus: chat:write; users.info: users:read.
    expect(manifest.oauth_config.scopes.bot).toEqual(
      expect.arrayContaining([
        "app_mentions:read",
        "channels:history",
        "groups:history",
        "im:history",
        "chat:write",
        "users:read",
        "commands",
      ]),
    );
  });

  it("subscribes to mentions, channel and DM messages, and sends everything to /slack/events", () => {
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(["app_mention", "message.channels", "message.im"]),
    );
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    const urls = [
      manifest.settings.event_subscriptions.request_url,
      manifest.settings.interactivity.request_url,
      manifest.features.slash_commands[0]!.url,
    ];
    for (const url of urls) expect(url).toMatch(/^https:\/\/.+\/slack\/events$/);
    expect(manifest.features.slash_commands.map((command) => command.command)).toEqual(["/parley"]);
  });
});
