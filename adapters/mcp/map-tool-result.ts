import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageBlock, TextBlock } from "../../src/ports/model-client.js";
import type { ToolOutput } from "../../src/ports/tool-provider.js";

/** Image types the Messages API accepts; any other image would make the whole request fail. */
const MODEL_IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/**
 * Maps an MCP tool result to Messages API blocks: text as text, images as images, everything else as a short
 * text the model can read. The text is cut to `maxResultChars` in total, with a note saying how much was cut.
 */
export function mapToolResult(result: CallToolResult, maxResultChars: number): ToolOutput {
  const blocks: Array<TextBlock | ImageBlock> = [];
  for (const item of result.content) {
    switch (item.type) {
      case "text":
        blocks.push(text(item.text));
        break;
      case "image":
        blocks.push(
          MODEL_IMAGE_TYPES.has(item.mimeType)
            ? { type: "image", source: { type: "base64", media_type: item.mimeType, data: item.data } }
            : text(`[an image of type ${item.mimeType}, which cannot be shown]`),
        );
        break;
      case "audio":
        blocks.push(text(`[audio of type ${item.mimeType}, not shown]`));
        break;
      case "resource":
        blocks.push(text("text" in item.resource ? item.resource.text : `[binary resource ${item.resource.uri}, not shown]`));
        break;
      case "resource_link":
        blocks.push(text(`[resource link: ${item.name} ${item.uri}]`));
        break;
    }
  }
  const hasText = result.content.some((item) => item.type === "text");
  if (!hasText && result.structuredContent !== undefined) blocks.push(text(JSON.stringify(result.structuredContent)));
  // The Messages API refuses empty text blocks.
  const nonEmpty = blocks.filter((block) => block.type !== "text" || block.text !== "");
  if (nonEmpty.length === 0) nonEmpty.push(text("[the tool returned no content]"));
  return { content: cutText(nonEmpty, maxResultChars), isError: result.isError === true };
}

function text(value: string): TextBlock {
  return { type: "text", text: value };
}

/** Keeps the first `maxChars` characters of text across the blocks; images are kept. */
function cutText(blocks: Array<TextBlock | ImageBlock>, maxChars: number): Array<TextBlock | ImageBlock> {
  const total = blocks.reduce((sum, block) => sum + (block.type === "text" ? block.text.length : 0), 0);
  if (total <= maxChars) return blocks;
  let room = maxChars;
  const kept: Array<TextBlock | ImageBlock> = [];
  for (const block of blocks) {
    if (block.type !== "text") {
      kept.push(block);
      continue;
    }
    if (room > 0) kept.push(text(block.text.slice(0, room)));
    room = Math.max(0, room - block.text.length);
  }
  kept.push(text(`[output cut: ${total - maxChars} of ${total} characters not shown]`));
  return kept;
}
