/**
 * Block Kit limits the renderers stay within (shared/reference/platforms.md §1.1).
 * Where sources disagree the smaller number is used.
 */
export const SLACK_LIMITS = {
  messageBlocks: 50,
  modalBlocks: 100,
  actionsElements: 25,
  blockIdChars: 255,
  actionIdChars: 255,
  textObjectChars: 3000,
  sectionTextChars: 3000,
  headerChars: 150,
  contextElements: 10,
  buttonTextChars: 75,
  buttonValueChars: 2000,
  optionTextChars: 75,
  optionValueChars: 75,
  placeholderChars: 150,
  inputLabelChars: 2000,
  inputHintChars: 2000,
  plainTextInputChars: 3000,
  modalTitleChars: 24,
  modalButtonChars: 24,
  privateMetadataChars: 3000,
  confirmTitleChars: 100,
  confirmTextChars: 300,
  confirmButtonChars: 30,
  /** Slack reports `msg_blocks_too_long` near 13.2k characters of block text in one message; stay well under. */
  messageBlockTextChars: 12000,
  /** All `markdown` blocks of one message together: Slack's documented cumulative limit. */
  markdownBlockChars: 12000,
  /** Slack advises keeping a message's `text` under 4,000 characters. */
  messageTextChars: 4000,
} as const;

/** How many options each control may show before the card degrades to the next one. */
export const CHOICE_LIMITS = {
  buttons: 5,
  radioButtons: 10,
  checkboxes: 10,
  staticSelect: 100,
} as const;

/** The largest request body the HTTP endpoint reads: Slack's payloads (a modal's state, a long message) stay far below. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;
