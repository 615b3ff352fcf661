import { describe, expect, it } from "vitest";
import { markdownToMrkdwn, splitMrkdwn } from "../../adapters/slack/markdown-to-mrkdwn.js";
import { escapeMrkdwn } from "../../adapters/slack/slack-text.js";

describe("markdownToMrkdwn", () => {
  it("converts emphasis, links, headings and bullets", () => {
    expect(markdownToMrkdwn("**bold** and *italic* and ~~gone~~")).toBe("*bold* and _italic_ and ~gone~");
    expect(markdownToMrkdwn("See [the docs](https://example.com/a?b=1)")).toBe("See <https://example.com/a?b=1|the docs>");
    expect(markdownToMrkdwn("Open <https://example.com/x> now")).toBe("Open <https://example.com/x> now");
    expect(markdownToMrkdwn("## Plan\n- one\n- **two**")).toBe("*Plan*\n• one\n• *two*");
  });

  it("keeps code as written and escapes what Slack would read as markup", () => {
    expect(markdownToMrkdwn("run `a **b** c` now")).toBe("run `a **b** c` now");
    expect(markdownToMrkdwn("```\nif (a < b && c) {}\n```")).toBe("```\nif (a &lt; b &amp;&amp; c) {}\n```");
    expect(markdownToMrkdwn("<!here> 1 < 2")).toBe("&lt;!here&gt; 1 &lt; 2");
  });

  it("keeps the user mentions the core writes", () => {
    expect(escapeMrkdwn("⏹ Stopped by <@U123>.")).toBe("⏹ Stopped by <@U123>.");
  });
});

describe("splitMrkdwn", () => {
  it("splits long text under the limit and never leaves a code fence open across messages", () => {
    const code = Array.from({ length: 400 }, (_, index) => `line ${index} of the listing`).join("\n");
    const text = `Intro paragraph.\n\n\`\`\`\n${code}\n\`\`\`\n\nOutro.`;
    const pieces = splitMrkdwn(text, 4000);
    expect(pieces.length).toBeGreaterThan(2);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(4000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(pieces.join("\n").replace(/```\n/g, "").includes("line 399 of the listing")).toBe(true);
  });

  it("leaves short text alone", () => {
    expect(splitMrkdwn("hello", 4000)).toEqual(["hello"]);
  });
});
