import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config.js";

const root = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

describe("Dockerfile and compose.yaml name what exists", () => {
  it("the image copies folders that exist, starts src/main.ts as npm start does, and checks /healthz", () => {
    const dockerfile = read("Dockerfile");
    for (const [, folder] of dockerfile.matchAll(/^COPY (\S+) \.\/\S+$/gm)) expect(existsSync(join(root, folder!)), folder).toBe(true);
    const start = JSON.parse(read("package.json")).scripts.start as string;
    expect(start).toBe("node --import tsx src/main.ts");
    expect(dockerfile).toContain('CMD ["node", "--import", "tsx", "src/main.ts"]');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain("/healthz");
    const tsx = JSON.parse(read("package.json")).devDependencies.tsx as string;
    expect(dockerfile).toContain(`tsx@${tsx}`);
  });

  it("compose.yaml sets only variables Parley reads, and runs the migrate script that exists", () => {
    const compose = read("compose.yaml");
    const parley = compose.slice(compose.indexOf("  migrate:"));
    const names = [...parley.matchAll(/^ {6}([A-Z_]+):/gm)].map((match) => match[1]!);
    expect(names.length).toBeGreaterThan(3);
    const known = Object.keys(configSchema.shape);
    for (const name of names) expect(known, name).toContain(name);
    expect(existsSync(join(root, "scripts/migrate.ts"))).toBe(true);
    expect(compose).toContain('"scripts/migrate.ts"');
  });
});
