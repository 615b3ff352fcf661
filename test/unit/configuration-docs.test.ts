import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config.js";

const variables = Object.keys(configSchema.shape);
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("every setting is documented where a newcomer looks", () => {
  it("docs/configuration.md's table lists exactly the variables Parley reads, in the schema's order", () => {
    const page = read("docs/configuration.md");
    const table = page.slice(page.indexOf("| variable"), page.indexOf("\n\n", page.indexOf("| variable")));
    const rows = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((match) => match[1]);
    expect(rows).toEqual(variables);
  });

  it(".env.example names each of them, set or commented out, in the same order", () => {
    const named = [...read(".env.example").matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]);
    expect(named.filter((name, index) => named.indexOf(name) === index)).toEqual(variables);
  });
});
