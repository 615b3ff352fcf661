import { describe, expect, it } from "vitest";
import { mentionedUserIds, modelMessages } from "../../adapters/slack/model-message.js";

const J = "\u2060";
const blockText = (message: { blocks: unknown[] } | undefined) => (message?.blocks[0] as { text: string } | undefined)?.text;

describe("the model's final answer on Slack", () => {
  it("is standard Markdown in a markdown block that pings nobody", () => {
    const markdown = "Ask <@U1> or <@U2|old name>; <!here>, <!subteam^S9|@oncall>, <!date^1700000000^{date}|Nov 14>, see <#C7|general>.";
    expect(mentionedUserIds(markdown)).toEqual(["U1", "U2"]);
    const [message, ...rest] = modelMessages(markdown, new Map([["U1", "alice"]]));
    expect(rest).toEqual([]);
    expect(message?.blocks).toEqual([
      { type: "markdown", text: `Ask @${J}alice or @${J}old name; @${J}here, @${J}oncall, Nov 14, see #general.` },
    ]);
    expect(message?.text).not.toMatch(/<[@!#]/);
    expect(blockText(modelMessages("ping @here and @Channel", new Map())[0])).toBe(`ping @${J}here and @${J}Channel`);
  });

  it("keeps Markdown as the model wrote it, turns Slack's <url|label> into a Markdown link, escapes the fallback", () => {
    const [message] = modelMessages("***x*** [a (b)](https://e.example/a_(b)) <https://e.example|here> 1 < 2 & 3", new Map());
    expect(blockText(message)).toBe("***x*** [a (b)](https://e.example/a_(b)) [here](https://e.example) 1 < 2 & 3");
    expect(message?.text).toContain("1 &lt; 2 &amp; 3");
  });

  it("splits past 12,000 characters without leaving a code fence open, each fallback under 4,000", () => {
    const code = Array.from({ length: 900 }, (_, index) => `line ${index} of the listing`).join("\n");
    const messages = modelMessages(`Intro.\n\n\`\`\`\n${code}\n\`\`\`\n\nOutro.`, new Map());
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) {
      const text = (message.blocks[0] as { text: string }).text;
      expect(text.length).toBeLessThanOrEqual(12000);
      expect((text.match(/```/g) ?? []).length % 2).toBe(0);
      expect(message.text.length).toBeLessThanOrEqual(4000);
    }
  });
});
