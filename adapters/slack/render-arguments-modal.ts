import type { types } from "@slack/bolt";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeUntrusted, mrkdwnText, plainText } from "./slack-text.js";

type Block = types.KnownBlock;

export const ARGUMENTS_MODAL_CALLBACK_ID = "parley-arguments";
/** Slack refuses a view over 250 kB (`view_too_large`); the code sections stop well below that. */
const ARGUMENTS_VIEW_BYTES = 200_000;
const FENCE = "```";
/** Room for the JSON in one section once the fences and their line breaks are counted. */
const SECTION_CODE_CHARS = SLACK_LIMITS.sectionTextChars - (FENCE.length + 1) * 2;
/** One block says what this is; one more may say what did not fit. */
const MAX_CODE_SECTIONS = SLACK_LIMITS.modalBlocks - 2;

/** A piece of the text: a line, or part of a line too long for one section, escaped for a code block. */
interface Segment {
  code: string;
  /** Where the piece ends in the text, so what did not fit can be counted. */
  end: number;
  /** Starts a new line of the text, rather than continuing a line cut in two. */
  newLine: boolean;
}

/**
 * The read-only modal behind "Show all arguments": the whole pretty JSON in preformatted sections of at most
 * 3,000 characters, up to Slack's 100 blocks and well under its view size; what still does not fit is counted.
 */
export function renderArgumentsModal(tool: string, argumentsText: string): types.ModalView {
  const { sections, shownChars } = codeSections(argumentsText);
  const leftOut = argumentsText.length - shownChars;
  const blocks: Block[] = [
    {
      type: "context",
      elements: [mrkdwnText(`\`${escapeUntrusted(tool)}\` would receive these arguments, ${argumentsText.length} characters in all.`)],
    },
    ...sections.map((code): Block => ({ type: "section", text: mrkdwnText(`${FENCE}\n${code}\n${FENCE}`) })),
  ];
  if (leftOut > 0) {
    blocks.push({
      type: "context",
      elements: [mrkdwnText(`⚠️ ${leftOut} more characters do not fit in a Slack view. Deny the call if you need to read them first.`)],
    });
  }
  return {
    type: "modal",
    callback_id: ARGUMENTS_MODAL_CALLBACK_ID,
    title: plainText("All arguments", SLACK_LIMITS.modalTitleChars),
    close: plainText("Close", SLACK_LIMITS.modalButtonChars),
    blocks,
  };
}

/** Packs the text's lines into sections, cutting a line only when it alone is too long for one section. */
export function codeSections(text: string): { sections: string[]; shownChars: number } {
  const sections: string[] = [];
  let current: Segment | undefined;
  let bytes = 0;
  let shownChars = 0;
  const flush = (): boolean => {
    if (!current) return true;
    const size = Buffer.byteLength(JSON.stringify(current.code));
    if (sections.length >= MAX_CODE_SECTIONS || bytes + size > ARGUMENTS_VIEW_BYTES) return false;
    sections.push(current.code);
    bytes += size;
    shownChars = current.end;
    current = undefined;
    return true;
  };
  for (const segment of segments(text)) {
    const joiner = segment.newLine ? "\n" : "";
    if (current && current.code.length + joiner.length + segment.code.length <= SECTION_CODE_CHARS) {
      current = { code: current.code + joiner + segment.code, end: segment.end, newLine: current.newLine };
      continue;
    }
    if (!flush()) return { sections, shownChars };
    current = segment;
  }
  flush();
  return { sections, shownChars };
}

/** Every line of the text, escaped for a code block; a line too long for one section is cut into pieces. */
function* segments(text: string): Generator<Segment> {
  let offset = 0;
  for (const [index, line] of text.split("\n").entries()) {
    if (index > 0) offset += 1;
    let code = "";
    let newLine = true;
    for (const character of line) {
      const escaped = escapeCode(character);
      if (code.length + escaped.length > SECTION_CODE_CHARS) {
        yield { code, end: offset, newLine };
        code = "";
        newLine = false;
      }
      code += escaped;
      offset += character.length;
    }
    yield { code, end: offset, newLine };
  }
}

/**
 * Slack's escaping of `&`, `<` and `>`, and a zero-width space after each backtick: three in a row would end
 * the code block early. Done per character so every piece's length is known before it is placed.
 */
function escapeCode(character: string): string {
  return character === "`" ? "`\u200B" : escapeUntrusted(character);
}
