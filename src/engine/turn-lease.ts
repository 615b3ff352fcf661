import { randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** A turn's lease lasts this long unless renewed: how soon another process takes over from one that died. */
export const LEASE_TTL_MS = 30_000;
/** A running turn renews its lease this often. */
export const LEASE_RENEW_MS = 10_000;

/** This process as a lease holder: host, process id, and a nonce, since a restart may get the same process id. */
export function leaseOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}

/**
 * Whether a lease's holder is known to be dead, so its lease need not be waited out: only a holder on this host can
 * be checked, by its process id. A holder with this very process id counts as alive (it may be this process), so a
 * container restarted under the same pid waits the lease out.
 */
export function holderIsDead(holder: string, self: string): boolean {
  const theirs = parseOwner(holder);
  const ours = parseOwner(self);
  if (!theirs || !ours || theirs.host !== ours.host || theirs.pid === ours.pid) return false;
  try {
    process.kill(theirs.pid, 0);
    return false;
  } catch (error) {
    // EPERM: alive, under another user.
    return (error as { code?: string }).code === "ESRCH";
  }
}

function parseOwner(owner: string): { host: string; pid: number } | undefined {
  const parts = owner.split(":");
  if (parts.length < 3) return undefined;
  const pid = Number(parts.at(-2));
  return Number.isInteger(pid) && pid > 0 ? { host: parts.slice(0, -2).join(":"), pid } : undefined;
}
