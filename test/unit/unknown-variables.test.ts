import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config.js";
import { unknownVariableProblems } from "../../src/unknown-variables.js";

const KNOWN = Object.keys(configSchema.shape);

describe("unknown variables", () => {
  it("leaves alone what a shell, a container, npm or the Anthropic SDK set", () => {
    const environment = Object.fromEntries(
      [
        "HOME",
        "HOSTNAME",
        "PATH",
        "PWD",
        "TERM",
        "USER",
        "LANG",
        "NODE_ENV",
        "NODE_OPTIONS",
        "TMPDIR",
        "KUBERNETES_PORT",
        "PARLEY_PORT",
        "HOST_IP",
        "npm_config_cache",
        "npm_package_name",
        "INIT_CWD",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_LOG",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "LOG_FORMAT",
        "DATABASE_HOST",
      ].map((name) => [name, "x"]),
    );
    expect(unknownVariableProblems(environment, KNOWN)).toEqual([]);
  });

  it("ignores an unknown variable set to an empty string, as it ignores a known one", () => {
    expect(unknownVariableProblems({ SLACK_TOKEN: "", DISCORD_BOT_TOKEN: " " }, KNOWN)).toEqual([]);
  });

  it("names what a slip probably meant", () => {
    expect(
      unknownVariableProblems(
        { DATABASE_URI: "x", ASK_TIMEOUT: "60", DISCORD_APP_ID: "1", DISCORD_MESSAGE_CONTENT_INTENT: "false", port: "3000" },
        KNOWN,
      ),
    ).toEqual([
      "DATABASE_URI: is not a variable Parley reads; did you mean DATABASE_URL?",
      "ASK_TIMEOUT: is not a variable Parley reads; did you mean ASK_TIMEOUT_S?",
      "DISCORD_APP_ID: is not a variable Parley reads; it reads DISCORD_TOKEN, DISCORD_APPLICATION_ID, DISCORD_GUILD_ID, DISCORD_API_URL, DISCORD_MESSAGE_CONTENT",
      "DISCORD_MESSAGE_CONTENT_INTENT: is not a variable Parley reads; did you mean DISCORD_MESSAGE_CONTENT?",
      "port: is not a variable Parley reads; did you mean PORT?",
    ]);
  });
});
