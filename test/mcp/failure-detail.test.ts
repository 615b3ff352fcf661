import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { failureDetail, secretsOf } from "../../adapters/mcp/failure-detail.js";

describe("failureDetail", () => {
  it("blanks every header value and its long words out of the message", () => {
    const secrets = secretsOf({ type: "http", url: "https://x", headers: { Authorization: "Bearer abcdef123456", "X-Key": "k" } });
    expect(failureDetail(new Error("refused Bearer abcdef123456 and abcdef123456"), secrets)).toBe("refused [redacted] and [redacted]");
  });

  it("blanks env values of a stdio server", () => {
    const secrets = secretsOf({ type: "stdio", command: "run", args: [], env: { TOKEN: "sk-live-1234" } });
    expect(failureDetail("spawn failed with sk-live-1234", secrets)).toBe("spawn failed with [redacted]");
  });

  it("keeps one short line, with the HTTP status when there is one", () => {
    expect(failureDetail(new Error(`first\nsecond ${"x".repeat(300)}`), [])).toMatch(/^first second x+…$/);
    expect(failureDetail(new Error(`first\nsecond ${"x".repeat(300)}`), [])).toHaveLength(200);
    expect(failureDetail(new StreamableHTTPError(401, "unauthorized"), [])).toBe("HTTP 401: Streamable HTTP error: unauthorized");
  });
});
