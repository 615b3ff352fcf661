import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { teamInstructions } from "../../src/agent-setup.js";
import { loadConfigPart } from "../../src/config.js";
import { buildSystemPrompt, SYSTEM_PROMPT } from "../../src/loop/system-prompt.js";
import { ConfigError } from "../../src/ports/errors.js";
import { FakeAnthropic, reply } from "../fakes/fake-anthropic.js";
import { EngineHarness, tempDatabasePath } from "../support/harness.js";

const KEYS = ["SYSTEM_PROMPT", "SYSTEM_PROMPT_FILE"] as const;

/** The system prompt main.ts builds from these variables. */
function promptFrom(environment: Record<string, string | undefined>): string {
  return buildSystemPrompt(teamInstructions(loadConfigPart(environment, KEYS)));
}

let directory: string | undefined;
function fileWith(contents: string): string {
  directory ??= mkdtempSync(join(tmpdir(), "parley-prompt-"));
  const path = join(directory, "instructions.md");
  writeFileSync(path, contents);
  return path;
}

afterEach(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

describe("Parley's system prompt", () => {
  it("tells the model it may have tools from MCP servers, that some need a person's approval, and how to read the results", () => {
    const prompt = promptFrom({});
    expect(prompt).toBe(SYSTEM_PROMPT);
    expect(prompt).toContain("tools from the team's MCP servers, named <server>__<tool>");
    expect(prompt).toContain("Some tools need a person's approval");
    expect(prompt).toContain("never claim an action you did not perform with a tool");
    for (const result of ['"denied by <who>: <reason>"', '"approval timed out"', '"cancelled"', '"interrupted: …"'])
      expect(prompt).toContain(result);
  });

  it("appends SYSTEM_PROMPT after Parley's own prompt, which stays whole", () => {
    const prompt = promptFrom({ SYSTEM_PROMPT: "  Always answer in French.  " });
    expect(prompt.startsWith(SYSTEM_PROMPT)).toBe(true);
    expect(prompt.slice(SYSTEM_PROMPT.length)).toBe("\n\nInstructions from the team that runs you:\nAlways answer in French.");
  });

  it("appends SYSTEM_PROMPT_FILE's contents, after SYSTEM_PROMPT when both are set", () => {
    const path = fileWith("Deploys happen on Tuesdays.\n");
    expect(promptFrom({ SYSTEM_PROMPT_FILE: path }).slice(SYSTEM_PROMPT.length)).toBe(
      "\n\nInstructions from the team that runs you:\nDeploys happen on Tuesdays.",
    );
    expect(promptFrom({ SYSTEM_PROMPT: "Be brief.", SYSTEM_PROMPT_FILE: path }).slice(SYSTEM_PROMPT.length)).toBe(
      "\n\nInstructions from the team that runs you:\nBe brief.\n\nDeploys happen on Tuesdays.",
    );
  });

  it("adds nothing for a blank file, and refuses to start on a file it cannot read, naming the variable", () => {
    expect(promptFrom({ SYSTEM_PROMPT_FILE: fileWith(" \n\n") })).toBe(SYSTEM_PROMPT);
    const missing = join(tmpdir(), "parley-no-such-dir", "instructions.md");
    expect(() => promptFrom({ SYSTEM_PROMPT_FILE: missing })).toThrow(ConfigError);
    expect(() => promptFrom({ SYSTEM_PROMPT_FILE: missing })).toThrow(`SYSTEM_PROMPT_FILE: ${missing}: no such file`);
  });

  it("reaches the model: its request carries Parley's prompt and the team's instructions", async () => {
    const fake = await new FakeAnthropic().start();
    const database = tempDatabasePath();
    const harness = new EngineHarness(fake, database.path, {
      systemPrompt: promptFrom({ SYSTEM_PROMPT: "Sign every answer with a wave." }),
    });
    try {
      fake.script(reply("Hello 👋"));
      await harness.say("hi");
      const system = JSON.stringify(fake.requests[0]?.body.system);
      expect(system).toContain("Some tools need a person's approval");
      expect(system).toContain("Instructions from the team that runs you:\\nSign every answer with a wave.");
    } finally {
      await harness.close();
      await fake.close();
      database.cleanup();
    }
  });
});
