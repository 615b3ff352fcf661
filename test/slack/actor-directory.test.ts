import type { webApi } from "@slack/bolt";
import { describe, expect, it, vi } from "vitest";
import { ActorDirectory, MAX_CACHED_ACTORS } from "../../adapters/slack/actor-directory.js";
import { SILENT_LOGGER } from "../../src/logger.js";

function directory() {
  const info = vi.fn(async ({ user }: { user: string }) => ({ ok: true, user: { id: user, name: user, is_admin: user === "U_HOT" } }));
  const client = { users: { info } } as unknown as webApi.WebClient;
  return {
    actors: new ActorDirectory(client, SILENT_LOGGER),
    lookups: (userId: string) => info.mock.calls.filter(([call]) => call.user === userId).length,
  };
}

describe("ActorDirectory", () => {
  it("keeps a person seen recently when the cache overflows, and drops the one seen least recently", async () => {
    const { actors, lookups } = directory();
    await expect(actors.get("U_HOT")).resolves.toMatchObject({ id: "U_HOT", isAdmin: true });
    // Fill the cache to the brim behind the hot entry, then use the hot entry again.
    for (let index = 0; index < MAX_CACHED_ACTORS - 1; index += 1) await actors.get(`U${index}`);
    await actors.get("U_HOT");
    // One more person overflows the cache: the least recently used (U0) goes, the hot entry stays.
    await actors.get("U_NEW");

    await expect(actors.get("U_HOT")).resolves.toMatchObject({ isAdmin: true });
    expect(lookups("U_HOT")).toBe(1);
    expect(lookups("U1")).toBe(1);
    await actors.get("U1");
    expect(lookups("U1")).toBe(1);
    await actors.get("U0");
    expect(lookups("U0")).toBe(2);
  });
});
