import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type TextUnit, truncate } from "../../src/ports/truncate.js";

const UNITS: readonly TextUnit[] = ["code-points", "utf-16"];

function lengthIn(text: string, unit: TextUnit): number {
  return unit === "utf-16" ? text.length : Array.from(text).length;
}

function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe("truncate", () => {
  it("returns text within the limit unchanged, and marks a cut with an ellipsis", () => {
    expect(truncate("hello", 5)).toBe("hello");
    expect(truncate("hello world", 6)).toBe("hello…");
    expect(truncate("hello world", 6, "utf-16")).toBe("hello…");
  });

  it("never splits an emoji at the cut, in either unit", () => {
    // "ab" then an emoji (two UTF-16 units) straddling the cut.
    expect(truncate("ab😀cd", 4, "utf-16")).toBe("ab…");
    expect(truncate("ab😀cd", 4, "code-points")).toBe("ab😀…");
    expect(truncate("😀😀😀", 2, "utf-16")).toBe("…");
    expect(truncate("😀😀😀", 2, "code-points")).toBe("😀…");
  });

  it("counts emoji as one character in code points and two in UTF-16", () => {
    expect(truncate("😀😀😀", 3, "code-points")).toBe("😀😀😀");
    expect(truncate("😀😀😀", 3, "utf-16")).toBe("😀…");
  });

  it("gives nothing for a limit with no room at all", () => {
    expect(truncate("hello", 0)).toBe("");
    expect(truncate("hello", 1)).toBe("…");
  });

  it("always respects the limit in its unit and never leaves half a surrogate pair", () => {
    const text = fc.array(fc.constantFrom("a", " ", "é", "😀", "👍🏽", "𝔘", "\n"), { maxLength: 60 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 70 }), fc.constantFrom(...UNITS), (input, limit, unit) => {
        const result = truncate(input, limit, unit);
        expect(lengthIn(result, unit)).toBeLessThanOrEqual(limit);
        expect(hasLoneSurrogate(result)).toBe(false);
        if (lengthIn(input, unit) <= limit) expect(result).toBe(input);
        else expect(input.startsWith(result.slice(0, -1))).toBe(true);
      }),
    );
  });
});
