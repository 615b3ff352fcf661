import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AdminCommands, type AdminCommandsDependencies } from "../../src/admin/admin-commands.js";
import { idKind } from "../../src/admin/parse-command.js";
import { createRuntimeSettings } from "../../src/engine/settings.js";
import { MemorySessionStore } from "../../src/store/memory-session-store.js";
import { recordedAdminReply } from "../fakes/recording-adapter.js";

const ADMIN = { id: "U_ADMIN", isAdmin: true };

/** An engine that may be asked who is an admin, and fails the test if anything is cancelled or stopped. */
function refusingEngine(calls: string[]): AdminCommandsDependencies["engine"] {
  const record = (name: string) => async () => {
    calls.push(name);
    throw new Error(`${name} should not be called`);
  };
  return {
    isAdmin: (actor) => actor.isAdmin === true,
    cancel: record("cancel"),
    stop: record("stop"),
    answer: record("answer"),
    retry: record("retry"),
    get catalog(): never {
      throw new Error("catalog should not be read");
    },
  };
}

async function cancel(id: string) {
  const store = new MemorySessionStore();
  const calls: string[] = [];
  const admin = new AdminCommands({ engine: refusingEngine(calls), store, settings: createRuntimeSettings() });
  const reply = recordedAdminReply(await admin.run({ text: `cancel ${id}`, actor: ADMIN, conversation: null }));
  return { reply, calls, audit: store.auditTrail.map(({ action, target, outcome }) => ({ action, target, outcome })) };
}

describe("/parley cancel tells an ask id from a session id by its shape", () => {
  it("knows the shapes Parley gives ids", () => {
    expect(idKind(randomBytes(9).toString("base64url"))).toBe("ask");
    expect(idKind("aZ09_-aZ09_-")).toBe("ask");
    expect(idKind(randomUUID())).toBe("session");
    expect(idKind(randomUUID().toUpperCase())).toBe("session");
    for (const neither of ["abc_DEF", "aZ09_-aZ09_", "aZ09_-aZ09_-x", "S-1", "0f0f0f0f-0f0f-0f0f-0f0f-0f0f0f0f0f0", "missing"])
      expect(idKind(neither)).toBeUndefined();
  });

  it("says an id that is neither is neither, cancels nothing, and audits it", async () => {
    const { reply, calls, audit } = await cancel("abc_DEF");
    expect(reply).toBe(
      "`abc_DEF` is neither an ask id (12 letters, digits, - and _, as a card shows) nor a session id (a UUID, as /parley sessions lists): nothing was cancelled.",
    );
    expect(calls).toEqual([]);
    expect(audit).toEqual([{ action: "admin-cancel", target: "abc_DEF", outcome: "not-an-id" }]);
  });

  it("names what it looked for when an id of either shape is unknown", async () => {
    expect((await cancel("aZ09_-aZ09_-")).reply).toBe("No such ask `aZ09_-aZ09_-`.");
    const session = randomUUID();
    expect((await cancel(session)).reply).toBe(`No such session \`${session}\`.`);
  });
});
