import { describe, expect, it } from "vitest";
import { chooseCacheTtl, estimatePromptTokens, MAX_NEW_SHARE, PromptCacheMemory, SHORT_WAIT_SECONDS } from "../../src/loop/cache-ttl.js";
import { billedInputTokens, cacheControlError, estimateTokens, PromptCacheModel, type RecordedRequest } from "../fakes/fake-anthropic.js";

describe("chooseCacheTtl", () => {
  // A 20 k-token prompt of which all but the last answer and the new message is still cached.
  const waits = { canAsk: true, canNeedApproval: false, askTimeoutSeconds: 86_400, promptTokens: 20_000, cachedTokens: 19_500 };

  it("caches for an hour a request that may end in an ask and writes little that is new", () => {
    expect(chooseCacheTtl(waits)).toBe("1h");
  });

  it("does the same for a tool that needs an approval, with ask_user off or spent", () => {
    expect(chooseCacheTtl({ ...waits, canAsk: false, canNeedApproval: true })).toBe("1h");
  });

  it("keeps the default five minutes when nothing in the request can wait for a person", () => {
    expect(chooseCacheTtl({ ...waits, canAsk: false })).toBe("5m");
  });

  it("keeps five minutes when every wait times out before the five-minute cache would", () => {
    expect(chooseCacheTtl({ ...waits, askTimeoutSeconds: SHORT_WAIT_SECONDS })).toBe("5m");
    expect(chooseCacheTtl({ ...waits, askTimeoutSeconds: SHORT_WAIT_SECONDS + 1 })).toBe("1h");
  });

  it("keeps five minutes for a request that writes much of its prompt: nothing cached, or large tool results", () => {
    expect(chooseCacheTtl({ ...waits, cachedTokens: 0 })).toBe("5m");
    expect(chooseCacheTtl({ ...waits, cachedTokens: 20_000 * (1 - MAX_NEW_SHARE) })).toBe("1h");
    expect(chooseCacheTtl({ ...waits, cachedTokens: 20_000 * (1 - MAX_NEW_SHARE) - 1 })).toBe("5m");
    // A shorter prompt than the one cached (a history rebuilt): nothing new to write.
    expect(chooseCacheTtl({ ...waits, cachedTokens: 30_000 })).toBe("1h");
  });

  it("estimates a prompt at about four characters of its JSON a token, without serialising it", () => {
    const tool = {
      name: "lookup",
      description: "Looks a word up.",
      inputSchema: { type: "object", properties: { word: { type: "string" } } },
    };
    const request = {
      system: "s".repeat(400),
      tools: [tool],
      messages: [
        { role: "user" as const, content: [{ type: "text" as const, text: "Deploy the report service ".repeat(40) }] },
        {
          role: "assistant" as const,
          content: [{ type: "tool_use" as const, id: "toolu_1", name: "lookup", input: { word: "x".repeat(300) } }],
        },
        {
          role: "user" as const,
          content: [
            { type: "tool_result" as const, tool_use_id: "toolu_1", content: [{ type: "text" as const, text: "y".repeat(500) }] },
            { type: "tool_result" as const, tool_use_id: "toolu_2", content: "z".repeat(200) },
          ],
        },
      ],
    };
    const serialised = Math.ceil(
      (request.system.length + JSON.stringify(request.tools).length + JSON.stringify(request.messages).length) / 4,
    );
    const estimate = estimatePromptTokens(request);
    // A ratio is what the ttl choice reads: within 5 % of the serialised prompt's count is plenty.
    expect(Math.abs(estimate - serialised) / serialised).toBeLessThan(0.05);
    expect(estimatePromptTokens({ ...request, messages: [...request.messages, request.messages[0]!] })).toBeGreaterThan(estimate + 250);
  });
});

describe("PromptCacheMemory", () => {
  const MINUTE = 60_000;

  it("knows nothing of a session it has not seen: nothing cached", () => {
    expect(new PromptCacheMemory().cachedTokens("S", 0)).toBe(0);
  });

  it("holds the session's previous prompt for that request's ttl", () => {
    const memory = new PromptCacheMemory();
    memory.answered("S", 0, "5m", 1000);
    expect(memory.cachedTokens("S", 5 * MINUTE)).toBe(1000);
    expect(memory.cachedTokens("S", 5 * MINUTE + 1)).toBe(0);
    memory.answered("S", 0, "1h", 1200);
    expect(memory.cachedTokens("S", 60 * MINUTE)).toBe(1200);
    expect(memory.cachedTokens("S", 60 * MINUTE + 1)).toBe(0);
    expect(memory.cachedTokens("other", 0)).toBe(0);
  });
});

type Body = RecordedRequest["body"];
const FIVE_MIN = { type: "ephemeral" };
const ONE_HOUR = { type: "ephemeral", ttl: "1h" };

/**
 * About 1,200 tokens of tools and system, then a conversation of 2·turns + 1 messages of about 500 tokens each; the
 * prompt of `turns + 1` is that of `turns` with one answer and one question more.
 */
function body(turns: number, tail: Record<string, unknown>, head: Record<string, unknown> = tail): Body {
  const messages: Body["messages"] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: "user", content: [{ type: "text", text: `question ${turn} `.padEnd(2000, "q") }] });
    messages.push({ role: "assistant", content: [{ type: "text", text: `answer ${turn} `.padEnd(2000, "a") }] });
  }
  messages.push({ role: "user", content: [{ type: "text", text: `question ${turns} `.padEnd(2000, "q"), cache_control: tail }] });
  return {
    model: "m",
    max_tokens: 100,
    tools: [{ name: "lookup", description: "d".repeat(2400), input_schema: {}, cache_control: head } as never],
    system: [{ type: "text", text: "s".repeat(2400), cache_control: head }],
    messages,
  };
}

describe("the fake's prompt cache", () => {
  let now = 0;
  const cache = () => new PromptCacheModel({ now: () => now });

  it("writes a new prefix, reads it back while alive, and writes it again once it has expired", () => {
    now = 0;
    const model = cache();
    const first = model.bill(body(4, FIVE_MIN));
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThan(4 * 1000);
    expect(first.input_tokens).toBe(0);
    now += 4 * 60_000;
    const again = model.bill(body(4, FIVE_MIN));
    expect(again).toMatchObject({ cache_read_input_tokens: first.cache_creation_input_tokens, cache_creation_input_tokens: 0 });
    // The read at 4 minutes kept it alive: 8 minutes after the write, it is still there.
    now += 4 * 60_000;
    expect(model.bill(body(4, FIVE_MIN)).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    now += 5 * 60_000 + 1;
    expect(model.bill(body(4, FIVE_MIN))).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: first.cache_creation_input_tokens,
    });
  });

  it("reads the longest earlier prefix and writes only what is new, at the price of its ttl", () => {
    now = 0;
    const model = cache();
    const before = model.bill(body(4, ONE_HOUR));
    now += 50 * 60_000;
    const grown = model.bill(body(5, ONE_HOUR));
    expect(grown.cache_read_input_tokens).toBe(before.cache_creation_input_tokens);
    expect(grown.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: grown.cache_creation_input_tokens });
    // The new answer and question, about 500 tokens each.
    expect(grown.cache_creation_input_tokens).toBeGreaterThan(1000);
    expect(grown.cache_creation_input_tokens).toBeLessThan(1100);
    now += 61 * 60_000;
    expect(model.bill(body(5, ONE_HOUR)).cache_read_input_tokens).toBe(0);
  });

  it("splits a mixed request: 1-hour writes up to the last 1-hour breakpoint, 5-minute writes after it", () => {
    now = 0;
    const usage = cache().bill(body(2, FIVE_MIN, ONE_HOUR));
    const head = usage.cache_creation!.ephemeral_1h_input_tokens;
    expect(head).toBeGreaterThan(1200);
    expect(head).toBeLessThan(1300);
    expect(usage.cache_creation!.ephemeral_5m_input_tokens).toBe(usage.cache_creation_input_tokens - head);
    expect(billedInputTokens({ ...usage, output_tokens: 0 })).toBeCloseTo(2 * head + 1.25 * (usage.cache_creation_input_tokens - head));
  });

  it("caches nothing below the minimum length", () => {
    now = 0;
    const model = new PromptCacheModel({ now: () => now, minimumTokens: 100_000 });
    const usage = model.bill(body(1, FIVE_MIN));
    expect(usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(usage.input_tokens).toBeGreaterThan(1000);
  });

  it("refuses a 1-hour breakpoint after a 5-minute one, as the API does, and more than four breakpoints", () => {
    expect(cacheControlError(body(1, ONE_HOUR, FIVE_MIN))).toMatch(/must not come after/);
    expect(cacheControlError(body(1, FIVE_MIN, ONE_HOUR))).toBeUndefined();
    expect(cacheControlError(body(1, ONE_HOUR))).toBeUndefined();
    expect(cacheControlError(body(1, { type: "ephemeral", ttl: "2h" }))).toMatch(/ttl/);
  });

  it("counts four characters a token", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcde")).toBe(2);
  });
});
