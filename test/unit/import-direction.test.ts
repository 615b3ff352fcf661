import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function sourceFiles(directory: string): string[] {
  return readdirSync(join(ROOT, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
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

  it("the check itself sees imports (it would catch a leak)", () => {
    expect(imports("src/main.ts")).toContain("../db/sqlite-session-store.js");
  });
});
