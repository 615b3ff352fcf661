import type { webApi } from "@slack/bolt";
import { z } from "zod";
import type { Actor } from "../../src/ports/conversation.js";
import type { Logger } from "../../src/ports/logger.js";

/** Admin rights change rarely; a person promoted or demoted is seen again within this time. */
export const ACTOR_CACHE_MS = 10 * 60 * 1000;
/** Past this many cached people the least recently seen is dropped, so a huge workspace cannot grow it without bound. */
export const MAX_CACHED_ACTORS = 10_000;

const userInfoSchema = z.object({
  user: z.object({
    id: z.string(),
    name: z.string().optional(),
    real_name: z.string().optional(),
    is_admin: z.boolean().optional(),
    is_owner: z.boolean().optional(),
    is_primary_owner: z.boolean().optional(),
    profile: z.object({ display_name: z.string().optional(), real_name: z.string().optional() }).optional(),
  }),
});

/** Who a Slack user is, and whether they are a workspace admin or owner, from `users.info`, cached. */
export class ActorDirectory {
  private readonly cache = new Map<string, { actor: Promise<Actor>; expiresAt: number }>();

  constructor(
    private readonly client: webApi.WebClient,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  get(userId: string): Promise<Actor> {
    const now = this.clock();
    const cached = this.cache.get(userId);
    if (cached && cached.expiresAt > now) {
      this.remember(userId, cached);
      return cached.actor;
    }
    const actor = this.lookUp(userId);
    this.remember(userId, { actor, expiresAt: now + ACTOR_CACHE_MS });
    return actor;
  }

  /** A Map iterates in insertion order, so re-inserting on every use keeps the least recently used first. */
  private remember(userId: string, entry: { actor: Promise<Actor>; expiresAt: number }): void {
    this.cache.delete(userId);
    this.cache.set(userId, entry);
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= MAX_CACHED_ACTORS) break;
      this.cache.delete(oldest);
    }
  }

  private async lookUp(userId: string): Promise<Actor> {
    try {
      const parsed = userInfoSchema.safeParse(await this.client.users.info({ user: userId }));
      if (!parsed.success) throw new Error("users.info answered an unexpected shape");
      const user = parsed.data.user;
      const name = user.profile?.display_name || user.profile?.real_name || user.real_name || user.name;
      return { id: userId, ...(name ? { name } : {}), isAdmin: Boolean(user.is_admin || user.is_owner || user.is_primary_owner) };
    } catch (error) {
      // Without users.info nobody is treated as an admin, and the next event asks again.
      this.cache.delete(userId);
      this.logger.warn({ userId, error: errorCode(error) }, "slack-user-lookup failed");
      return { id: userId, isAdmin: false };
    }
  }
}

/** A Slack Web API error's code (`invalid_blocks`, `ratelimited`), never its request body. */
export function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const data = (error as { data?: { error?: unknown } }).data;
    if (typeof data?.error === "string") return data.error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return error instanceof Error ? error.name : "unknown";
}
