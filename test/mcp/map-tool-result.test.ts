import { describe, expect, it } from "vitest";
import { mapToolResult } from "../../adapters/mcp/map-tool-result.js";

const PNG = "iVBORw0KGgo=";

describe("mapToolResult", () => {
  it("maps text to text blocks and images to base64 image blocks, in order", () => {
    const output = mapToolResult(
      {
        content: [
          { type: "text", text: "a picture:" },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
      },
      1000,
    );
    expect(output).toEqual({
      content: [
        { type: "text", text: "a picture:" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
      isError: false,
    });
  });

  it("notes an image the model cannot take (svg) as text rather than failing the whole request", () => {
    const output = mapToolResult({ content: [{ type: "image", data: "PHN2Zz4=", mimeType: "image/svg+xml" }] }, 1000);
    expect(output.content).toEqual([{ type: "text", text: "[an image of type image/svg+xml, which cannot be shown]" }]);
  });

  it("notes audio as text", () => {
    const output = mapToolResult({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] }, 1000);
    expect(output.content).toEqual([{ type: "text", text: "[audio of type audio/wav, not shown]" }]);
  });

  it("gives an embedded resource's text, or its URI when it is a blob, and a resource link's name and URI", () => {
    const output = mapToolResult(
      {
        content: [
          { type: "resource", resource: { uri: "file:///a.txt", text: "hello" } },
          { type: "resource", resource: { uri: "file:///a.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
          { type: "resource_link", uri: "file:///docs/b.md", name: "b.md" },
        ],
      },
      1000,
    );
    expect(output.content).toEqual([
      { type: "text", text: "hello" },
      { type: "text", text: "[binary resource file:///a.bin, not shown]" },
      { type: "text", text: "[resource link: b.md file:///docs/b.md]" },
    ]);
  });

  it("gives structuredContent as JSON text when there is no text, and not when there is", () => {
    expect(mapToolResult({ content: [], structuredContent: { answer: 42 } }, 1000).content).toEqual([
      { type: "text", text: '{"answer":42}' },
    ]);
    expect(mapToolResult({ content: [{ type: "text", text: "42" }], structuredContent: { answer: 42 } }, 1000).content).toEqual([
      { type: "text", text: "42" },
    ]);
  });

  it("carries isError", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "locked" }], isError: true }, 1000).isError).toBe(true);
  });

  it("never sends an empty text block (the API refuses one)", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "" }] }, 1000).content).toEqual([
      { type: "text", text: "[the tool returned no content]" },
    ]);
    expect(mapToolResult({ content: [] }, 1000).content).toEqual([{ type: "text", text: "[the tool returned no content]" }]);
  });

  it("cuts the text across blocks at the limit, keeps images, and says how much was cut", () => {
    const output = mapToolResult(
      {
        content: [
          { type: "text", text: "a".repeat(6) },
          { type: "image", data: PNG, mimeType: "image/png" },
          { type: "text", text: "b".repeat(6) },
          { type: "text", text: "c".repeat(6) },
        ],
      },
      10,
    );
    expect(output.content).toEqual([
      { type: "text", text: "aaaaaa" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "text", text: "bbbb" },
      { type: "text", text: "[output cut: 8 of 18 characters not shown]" },
    ]);
  });

  it("leaves a result at exactly the limit whole", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "x".repeat(10) }] }, 10).content).toEqual([
      { type: "text", text: "x".repeat(10) },
    ]);
  });
});
