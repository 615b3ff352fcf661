import { z } from "zod";
import { type AskSpec, parseAskSpec } from "../ask/spec.js";

/** The platforms an ask can be sent to, as they prefix channels and people: `slack:C0123`, `discord:1234…`. */
const PLATFORMS = ["slack", "discord"] as const;
const ID = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_ANSWERERS = 50;
const MAX_METADATA_CHARS = 4000;
/**
 * How deep a body may nest objects and arrays. Parley's own JSON handling (the idempotency hash, the metadata's size,
 * the stored row) recurses, and a 64 KB body can nest 30 000 levels deep: past a few thousand that overflows the stack.
 */
const MAX_DEPTH = 32;

/** An ask request of the HTTP API or the MCP server, checked: where it goes, who may answer, what it asks. */
export interface AskRequest {
  platform: string;
  channel: string;
  thread?: string | undefined;
  /** Platform user ids, without the prefix; empty: anyone who sees the card. */
  answerers: string[];
  spec: AskSpec;
  metadata: unknown;
  callbackUrl: string | null;
}

const interruptSchema = z.object({
  status: z.literal("INTERRUPT"),
  intent: z.literal("HUMAN_INTERVENTION"),
  data: z.looseObject({ question: z.unknown(), candidates: z.unknown().optional() }),
});

const requestSchema = z.strictObject({
  channel: z.string(),
  thread: z.string().regex(ID, "must be the thread's id (a Slack ts such as 1700000000.000100, a Discord thread id)").optional(),
  answerers: z.array(z.string()).max(MAX_ANSWERERS).optional(),
  ask: z.unknown().optional(),
  interrupt: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  callback_url: z.string().optional(),
});

/** The keys a request body may hold (openapi.json lists the same; a test holds the two together). */
export const REQUEST_KEYS = Object.keys(requestSchema.shape);

/** Splits `slack:C0123` into its platform and id, or says what it should look like. */
function address(text: string, what: string, example: string): { platform: string; id: string } | string {
  const [platform = "", id, ...rest] = text.split(":");
  if (!PLATFORMS.includes(platform as (typeof PLATFORMS)[number]) || id === undefined || rest.length > 0 || !ID.test(id))
    return `"${what}" must be "slack:<id>" or "discord:<id>", for example "${example}"; got ${JSON.stringify(text.slice(0, 80))}`;
  return { platform, id };
}

/** Whether a JSON value nests objects or arrays deeper than `limit`; iterative, so any depth is measured safely. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ item: unknown; depth: number }> = [{ item: value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (typeof next.item !== "object" || next.item === null) continue;
    if (next.depth >= limit) return true;
    for (const child of Object.values(next.item)) stack.push({ item: child, depth: next.depth + 1 });
  }
  return false;
}

function callbackUrl(text: string | undefined): string | null | { error: string } {
  if (text === undefined) return null;
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {}
  return { error: `"callback_url" must be an http(s) URL such as "https://ci.example.com/parley"` };
}

/**
 * Reads a request body into an AskRequest, or the reason it cannot be one, worded as DESIGN §2's errors are: what is
 * wrong and how to fix it. `defaultTimeoutSeconds` is ASK_TIMEOUT_S.
 */
export function parseAskRequest(
  body: unknown,
  defaultTimeoutSeconds: number,
): { ok: true; request: AskRequest } | { ok: false; error: string } {
  const fail = (error: string) => ({ ok: false as const, error: `ERROR: ${error}` });
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return fail('the body must be a JSON object such as {"channel": "slack:C0123", "ask": {"type": "confirm", "question": "Ship it?"}}');
  if (nestedDeeperThan(body, MAX_DEPTH))
    return fail(`the body nests objects or arrays more than ${MAX_DEPTH} levels deep: flatten "metadata" (or "interrupt")`);
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === "unrecognized_keys")
      return fail(
        `unknown key(s) ${issue.keys.map((key) => `"${key}"`).join(", ")}: use channel, thread, answerers, ask, interrupt, metadata, callback_url`,
      );
    return fail(`"${issue.path.join(".") || "body"}" ${issue.message}`);
  }
  const data = parsed.data;
  const place = address(data.channel, "channel", "slack:C0123ABC");
  if (typeof place === "string") return fail(place);
  const answerers: string[] = [];
  for (const text of data.answerers ?? []) {
    const person = address(text, "answerers[]", "slack:U0ALICE");
    if (typeof person === "string") return fail(person);
    if (person.platform !== place.platform)
      return fail(`"answerers" must be people of ${place.platform}, where the card is posted; got "${text.slice(0, 80)}"`);
    if (!answerers.includes(person.id)) answerers.push(person.id);
  }
  // An empty list would read as "anyone", the opposite of what a caller who names answerers means.
  if (data.answerers?.length === 0) return fail('"answerers" is empty: name at least one person, or leave it out to let anyone answer');
  if ((data.ask === undefined) === (data.interrupt === undefined))
    return fail(
      'give the question as "ask" (any ask_user input) or as "interrupt" (GenericAgent\'s INTERRUPT payload), exactly one of them',
    );
  let input = data.ask;
  if (data.interrupt !== undefined) {
    const interrupt = interruptSchema.safeParse(data.interrupt);
    if (!interrupt.success)
      return fail(
        '"interrupt" must be {"status": "INTERRUPT", "intent": "HUMAN_INTERVENTION", "data": {"question": "…", "candidates": […]}}',
      );
    const { question, candidates } = interrupt.data.data;
    input = Array.isArray(candidates) && candidates.length > 0 ? { question, candidates } : { question };
  }
  const spec = parseAskSpec(input, defaultTimeoutSeconds);
  // The spec parser's words are the model's ("ERROR: ask_user: …"): the same repair applies to this caller.
  if (!spec.ok) return { ok: false, error: spec.error };
  const metadata = data.metadata ?? null;
  if (metadata !== null && JSON.stringify(metadata).length > MAX_METADATA_CHARS)
    return fail(`"metadata" is over ${MAX_METADATA_CHARS} characters of JSON: keep only what you need to find the ask again`);
  const url = callbackUrl(data.callback_url);
  if (url !== null && typeof url === "object") return fail(url.error);
  return {
    ok: true,
    request: {
      platform: place.platform,
      channel: place.id,
      thread: data.thread,
      answerers,
      spec: { ...spec.spec, external: { answerers } },
      metadata,
      callbackUrl: url,
    },
  };
}
