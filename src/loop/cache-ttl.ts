import type { CacheTtl, ContentBlock, ImageBlock, ModelRequest, TextBlock, ToolDefinition } from "../ports/model-client.js";

/**
 * The longest wait the 5-minute cache surely outlives: its 5 minutes run from the request that wrote it, and the
 * model's own answer and the resume take some of them (a minute, to be safe).
 */
export const SHORT_WAIT_SECONDS = 240;

/** The largest share of its prompt a request may have to write and still be cached for the hour (see chooseCacheTtl). */
export const MAX_NEW_SHARE = 0.1;

const TTL_MS: Record<CacheTtl, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

export interface CacheTtlInputs {
  /** ask_user is offered and this turn has asks left: an ask over budget is answered at once, without a wait. */
  canAsk: boolean;
  /** An offered tool needs a person's approval (policy `ask`): calling it suspends the turn like an ask. */
  canNeedApproval: boolean;
  /** ASK_TIMEOUT: how long an approval waits, and an ask unless the model sets its own `timeout_s`. */
  askTimeoutSeconds: number;
  /** The request's prompt, in tokens (estimatePromptTokens). */
  promptTokens: number;
  /** How much of it the provider still holds from this session's previous request (PromptCacheMemory). */
  cachedTokens: number;
}

/**
 * The cache lifetime of one request, chosen when it is sent, before anyone knows how the model will answer. The
 * request after a person's answer reads what THIS request writes (its whole prompt), so this request is the one
 * that must be cached for the hour if the answer is to find it 5 to 60 minutes later. "1h" when both:
 * - it may end in a wait for a person (an ask, or an approval) that can outlast the 5-minute cache;
 * - what it must write, the part of its prompt not cached yet, is at most MAX_NEW_SHARE of the prompt.
 * "5m", the API's default, otherwise.
 *
 * Why the second rule: the hour costs 2× instead of 1.25× on what the request writes (+0.75 × the new tokens)
 * and saves 1.15 × the whole prompt (a read at 0.1 instead of a re-write at 1.25) only when an answer comes 5 to
 * 60 minutes later. Writing a tenth of the prompt at most, the hour costs at most 7.5 % of the prompt and pays
 * for itself if one such request in fifteen ends that way. The usual request writes far less (the last answer and
 * the next message: tens to hundreds of tokens). One that writes most of its prompt (the first of a session, the
 * first after the cache lapsed or after a restart, one carrying large tool results) would pay 0.75 × all of it,
 * worth it only if two in three were answered in that window.
 *
 * Deliberately not a guess from how fast this thread's people answered before: with the history cached, the two
 * mistakes cost very different amounts. A needless "1h" pays 0.75 × the new tokens, a missing one re-writes the
 * whole history (1.15 × it): with 20 k tokens of history and 500 new, 375 against 23,000. A quick answer last
 * time would have to promise a quick one next time 98 % of the time to be worth acting on.
 */
export function chooseCacheTtl(inputs: CacheTtlInputs): CacheTtl {
  const mayWaitLong = (inputs.canAsk || inputs.canNeedApproval) && inputs.askTimeoutSeconds > SHORT_WAIT_SECONDS;
  const newTokens = inputs.promptTokens - Math.min(inputs.cachedTokens, inputs.promptTokens);
  return mayWaitLong && newTokens <= MAX_NEW_SHARE * inputs.promptTokens ? "1h" : "5m";
}

/**
 * Four characters a token: close enough for English and JSON, and what matters here is a ratio. The characters are
 * counted block by block, not by serialising the prompt: a 500-message history is 250 kB of JSON, and building it
 * on every request cost a third of a millisecond per resume (bench/RESULTS.md).
 */
export function estimatePromptTokens(request: Pick<ModelRequest, "system" | "tools" | "messages">): number {
  let characters = request.system.length;
  for (const tool of request.tools) characters += toolCharacters(tool);
  for (const message of request.messages) for (const block of message.content) characters += blockCharacters(block);
  return Math.ceil(characters / 4);
}

/** What a block's JSON adds beyond its text: the braces, the keys and the quotes. */
const BLOCK_FRAME_CHARACTERS = 30;
/** Tool definitions are the same objects request after request (the catalog keeps them): each is measured once. */
const toolSizes = new WeakMap<ToolDefinition, number>();

function toolCharacters(tool: ToolDefinition): number {
  let size = toolSizes.get(tool);
  if (size === undefined) {
    size = JSON.stringify(tool).length;
    toolSizes.set(tool, size);
  }
  return size;
}

function blockCharacters(block: ContentBlock | TextBlock | ImageBlock): number {
  switch (block.type) {
    case "text":
      return BLOCK_FRAME_CHARACTERS + block.text.length;
    case "image":
      return BLOCK_FRAME_CHARACTERS + block.source.data.length;
    case "tool_use":
      return BLOCK_FRAME_CHARACTERS + block.id.length + block.name.length + (JSON.stringify(block.input)?.length ?? 0);
    case "tool_result": {
      let size = BLOCK_FRAME_CHARACTERS + block.tool_use_id.length;
      if (typeof block.content === "string") return size + block.content.length;
      for (const part of block.content) size += blockCharacters(part);
      return size;
    }
  }
}

/** Forgotten sessions are cold ones: past this many, those whose cache has lapsed are dropped. */
const REMEMBERED_SESSIONS = 10_000;

/**
 * What this process has seen of each session's prompt cache: its previous request, how long its prompt was and
 * until when the provider keeps it. A session it has not seen (new, run by another process, or before a restart)
 * has nothing cached, as far as it knows.
 */
export class PromptCacheMemory {
  private readonly sessions = new Map<string, { until: number; promptTokens: number }>();

  /** How much of the session's next prompt is still cached at `now`: the previous prompt, while its ttl lasts. */
  cachedTokens(sessionId: string, now: number): number {
    const known = this.sessions.get(sessionId);
    return known !== undefined && now <= known.until ? known.promptTokens : 0;
  }

  /** A request of the session, sent at `sentAt` with this prompt and ttl, was answered. */
  answered(sessionId: string, sentAt: number, ttl: CacheTtl, promptTokens: number): void {
    this.sessions.set(sessionId, { until: sentAt + TTL_MS[ttl], promptTokens });
    if (this.sessions.size > REMEMBERED_SESSIONS) {
      for (const [id, known] of this.sessions) if (known.until < sentAt) this.sessions.delete(id);
    }
  }
}
