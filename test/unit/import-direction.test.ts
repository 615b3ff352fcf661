import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** TypeScript and the plain ES modules run as they are (the ack front's worker thread is an `.mjs`). */
const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

function imports(file: string): string[] {
  const source = readFileSync(join(ROOT, file), "utf8");
  return [...source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => match[1]!);
}

describe("import direction", () => {
  it("src/ (but src/main.ts) imports no adapter, no db module, no platform or MCP SDK and no database driver", () => {
    const forbidden =
      /^(?:(?:\.\.\/)+(?:adapters|db)\/|@slack\/|discord\.js|@discordjs\/|better-sqlite3|@anthropic-ai\/|@modelcontextprotocol\/)/;
    const offenders = sourceFiles("src")
      .filter((file) => file !== join("src", "main.ts"))
      .flatMap((file) =>
        imports(file)
          .filter((specifier) => forbidden.test(specifier))
          .map((specifier) => `${file} → ${specifier}`),
      );
    expect(offenders).toEqual([]);
  });

  it("adapters never import one another", () => {
    const offenders = sourceFiles("adapters").flatMap((file) => {
      const own = file.split("/")[1];
      return imports(file)
        .filter((specifier) => /^\.\.\/(?!\.\.)/.test(specifier) && !specifier.startsWith(`../${own}/`))
        .map((specifier) => `${file} → ${specifier}`);
    });
    expect(offenders).toEqual([]);
  });

  it("adapters reach the core only through its ports and the ask_user spec, never the engine or the store", () => {
    const offenders = sourceFiles("adapters").flatMap((file) =>
      imports(file)
        .filter((specifier) => /^(?:\.\.\/)+src\//.test(specifier) && !/^(?:\.\.\/)+src\/(?:ports|ask)\//.test(specifier))
        .map((specifier) => `${file} → ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it("src/ writes no platform markup: mentions, channel links and bold are rich text the adapters render", () => {
    // parse-command.ts reads mentions people type in a command line; reading is not writing.
    const markup = /<[@#!]|`\*[A-Z]|"\*[A-Z]/;
    const offenders = sourceFiles("src")
      .filter((file) => file !== join("src", "admin", "parse-command.ts"))
      .flatMap((file) =>
        readFileSync(join(ROOT, file), "utf8")
          .split("\n")
          .filter((line) => !line.trimStart().startsWith("*") && !line.trimStart().startsWith("//") && markup.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      );
    expect(offenders).toEqual([]);
  });

  it("the checks themselves see imports and markup (they would catch a leak)", () => {
    expect(imports("src/main.ts")).toContain("../db/open-storage.js");
    expect(sourceFiles("adapters")).toContain(join("adapters", "slack", "ack-front.mjs"));
    expect(imports("adapters/slack/ack-front.mjs")).toContain("node:worker_threads");
    expect(imports("adapters/slack/slack-adapter.ts").some((specifier) => specifier.includes("src/ports/"))).toBe(true);
    expect(/<[@#!]/.test(readFileSync(join(ROOT, "adapters", "slack", "slack-dialect.ts"), "utf8"))).toBe(true);
  });
});
