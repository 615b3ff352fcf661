import { describe, expect, it } from "vitest";
import { assignToolNames, TOOL_NAME_PATTERN } from "../../adapters/mcp/tool-names.js";

describe("assignToolNames", () => {
  it("names each tool <server>__<tool>", () => {
    expect(
      assignToolNames([
        { server: "files", tool: "read_file" },
        { server: "github", tool: "create-issue" },
      ]),
    ).toEqual(["files__read_file", "github__create-issue"]);
  });

  it("replaces characters the Messages API refuses with _", () => {
    expect(assignToolNames([{ server: "my.server", tool: "get weather/now" }])).toEqual(["my_server__get_weather_now"]);
  });

  it("cuts long names to 64 characters, keeping two long names that share a prefix apart", () => {
    const long = "a".repeat(70);
    const names = assignToolNames([
      { server: "s", tool: `${long}_one` },
      { server: "s", tool: `${long}_two` },
    ]);
    for (const name of names) expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(names[0]).toHaveLength(64);
    expect(names[0]!.startsWith("s__aaaa")).toBe(true);
    expect(new Set(names).size).toBe(2);
  });

  it("keeps names unique when cleaning makes two equal; the one that fit as written keeps its name", () => {
    const names = assignToolNames([
      { server: "a.b", tool: "c" },
      { server: "a_b", tool: "c" },
    ]);
    expect(names[1]).toBe("a_b__c");
    expect(names[0]).toMatch(/^a_b__c_[0-9a-f]{8}$/);
  });

  it("gives the same names from one start to the next", () => {
    const addresses = [
      { server: "x y", tool: "t" },
      { server: "x_y", tool: "t" },
      { server: "s", tool: "b".repeat(80) },
    ];
    expect(assignToolNames(addresses)).toEqual(assignToolNames(addresses));
  });

  it("fits any names at all to the pattern, uniquely", () => {
    const addresses = ["é", "", "日本語", "a".repeat(200), "a".repeat(201), "$", "%"].map((tool) => ({ server: "ü", tool }));
    const names = assignToolNames(addresses);
    for (const name of names) expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(new Set(names).size).toBe(addresses.length);
  });
});
