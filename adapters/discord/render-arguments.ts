import { AttachmentBuilder } from "discord.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";

export const ARGUMENTS_FILE_NAME = "arguments.json";
/** Discord's smallest upload limit, used when an interaction does not say its own. */
const DEFAULT_ATTACHMENT_BYTES = 10 * 1024 * 1024;

/** The private reply to "Show all arguments": what it is, in words, and the whole pretty JSON as a file. */
export interface ArgumentsReply {
  content: string;
  files: AttachmentBuilder[];
  allowedMentions: { parse: [] };
}

/**
 * The arguments travel as `arguments.json` rather than as messages of code blocks: a file holds any length,
 * keeps the text byte for byte (no Markdown to escape), and opens in Discord's own viewer.
 */
export function renderArgumentsReply(tool: string, argumentsText: string, limitBytes = DEFAULT_ATTACHMENT_BYTES): ArgumentsReply {
  const data = Buffer.from(argumentsText, "utf8");
  if (data.length > limitBytes) {
    const content = `The arguments of \`${tool}\` are ${data.length} bytes, more than Discord lets me attach here. Deny the call if you need to read them first.`;
    return { content: truncate(content, DISCORD_LIMITS.contentChars), files: [], allowedMentions: { parse: [] } };
  }
  const content = `All arguments of \`${tool}\`, ${argumentsText.length} characters, exactly as the tool would receive them:`;
  return {
    content: truncate(content, DISCORD_LIMITS.contentChars),
    files: [new AttachmentBuilder(data, { name: ARGUMENTS_FILE_NAME, description: `Arguments of ${tool}` })],
    allowedMentions: { parse: [] },
  };
}
