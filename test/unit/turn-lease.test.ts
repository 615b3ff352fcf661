import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { holderIsDead, leaseOwner } from "../../src/engine/turn-lease.js";
import { deadOwner } from "../support/dead-process.js";

describe("who holds a lease or a post claim, and whether it is dead", () => {
  const self = leaseOwner();

  it("another engine of this very process is alive", () => {
    expect(holderIsDead(leaseOwner(), self)).toBe(false);
    expect(holderIsDead(self, self)).toBe(false);
  });

  it("an earlier process under this pid (a container restarted as pid 1) is dead; a later one cannot be, and is not", () => {
    const started = Math.floor(performance.timeOrigin);
    expect(holderIsDead(leaseOwner(started - 60_000), self)).toBe(true);
    expect(holderIsDead(leaseOwner(started + 60_000), self)).toBe(false);
  });

  it("a process of this host that is gone is dead; a live one, or one on another host, is not", () => {
    expect(holderIsDead(deadOwner(), self)).toBe(true);
    expect(holderIsDead(`${hostname()}:${process.ppid}:abc-123`, self)).toBe(false);
    expect(holderIsDead(`elsewhere:${process.pid}:0-1`, self)).toBe(false);
  });

  it("an owner written before start times were kept, under this pid, counts as alive: it cannot be told apart", () => {
    expect(holderIsDead(`${hostname()}:${process.pid}:0a1b2c3d`, self)).toBe(false);
    expect(holderIsDead("not an owner", self)).toBe(false);
  });
});
