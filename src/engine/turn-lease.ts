import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LeaseAnswer, PostClaim, TurnLease, TurnLeaseAnswer } from "../ports/session-store.js";

/** A turn's lease lasts this long unless renewed: how soon another process takes over from one that died. */
export const LEASE_TTL_MS = 30_000;
/** A running turn renews its lease this often. */
export const LEASE_RENEW_MS = 10_000;

/**
 * A claim to post a card or a final answer lasts this long: another process posts it after that (looking for it
 * first) only if the claimant neither posted it nor is known alive. Longer than any post, 429 waits included.
 */
export const POST_CLAIM_TTL_MS = 60_000;

/** The claim the writer of an ask or a final answer stores with it: it posts it itself, right after the write. */
export function postClaim(owner: string, now: number): PostClaim {
  return { owner, until: now + POST_CLAIM_TTL_MS };
}

/**
 * Takes a lease or a claim for `owner` through `take`; a holder known to be dead (its process is gone from this host)
 * is displaced at once, any other keeps it until it expires. The grant, or undefined.
 */
export async function takeDisplacing<Answer extends LeaseAnswer | TurnLeaseAnswer>(
  take: (lease: TurnLease) => Promise<Answer>,
  lease: TurnLease,
): Promise<Extract<Answer, { taken: true }> | undefined> {
  const first = await take(lease);
  if (first.taken) return first as Extract<Answer, { taken: true }>;
  if (first.holder === null || !holderIsDead(first.holder, lease.owner)) return undefined;
  const second = await take({ ...lease, displace: first.holder });
  return second.taken ? (second as Extract<Answer, { taken: true }>) : undefined;
}

/** When this process started, in ms since the epoch: it tells an earlier process under the same pid from this one. */
const PROCESS_STARTED_MS = Math.floor(performance.timeOrigin);

/**
 * This process as a lease holder: host, process id, and its start time with a nonce (`<start>-<nonce>`), since a
 * restart may get the same process id and one process may run several engines.
 */
export function leaseOwner(startedMs = PROCESS_STARTED_MS): string {
  return `${hostname()}:${process.pid}:${startedMs.toString(36)}-${randomBytes(4).toString("hex")}`;
}

/**
 * Whether a lease's holder is known to be dead, so its lease need not be waited out: only a holder on this host can
 * be checked. One with another pid is dead when no process has that pid. One with this very pid is dead when it
 * started before this process did: two live processes never share a pid, so it was an earlier one (a container
 * restarted as pid 1). One that started with this process is this process (another engine in it): alive.
 */
export function holderIsDead(holder: string, self: string): boolean {
  const theirs = parseOwner(holder);
  const ours = parseOwner(self);
  if (!theirs || !ours || theirs.host !== ours.host) return false;
  if (theirs.pid === ours.pid) return theirs.startedMs !== undefined && ours.startedMs !== undefined && theirs.startedMs < ours.startedMs;
  try {
    process.kill(theirs.pid, 0);
    return false;
  } catch (error) {
    // EPERM: alive, under another user.
    return (error as { code?: string }).code === "ESRCH";
  }
}

/** `host:pid:nonce`; the nonce starts with the process's start time in base 36 (owners written before it do not). */
function parseOwner(owner: string): { host: string; pid: number; startedMs: number | undefined } | undefined {
  const parts = owner.split(":");
  if (parts.length < 3) return undefined;
  const pid = Number(parts.at(-2));
  const [started, rest] = (parts.at(-1) ?? "").split("-");
  const startedMs = rest === undefined ? undefined : Number.parseInt(started ?? "", 36);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { host: parts.slice(0, -2).join(":"), pid, startedMs: Number.isFinite(startedMs) ? startedMs : undefined };
}
