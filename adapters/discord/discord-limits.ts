import { truncate as truncateText } from "../../src/ports/truncate.js";

/**
 * Discord's documented limits for legacy (non Components V2) messages and modals.
 * The renderers degrade below these; `checkMessagePayload` and `checkModalPayload` enforce them before a post.
 */
export const DISCORD_LIMITS = {
  contentChars: 2000,
  actionRows: 5,
  buttonsPerRow: 5,
  buttonLabelChars: 80,
  customIdChars: 100,
  selectOptions: 25,
  selectOptionTextChars: 100,
  selectPlaceholderChars: 150,
  modalTitleChars: 45,
  modalComponents: 5,
  modalLabelChars: 45,
  modalDescriptionChars: 100,
  textInputChars: 4000,
  textInputPlaceholderChars: 100,
  threadNameChars: 100,
} as const;

/**
 * Cuts text to one of these limits, marking the cut with an ellipsis, counted in UTF-16 code units: Discord's API
 * counts code points (discord-api-docs#1315), but discord.js's builders and `checkMessagePayload` count `.length`,
 * the stricter of the two, so text cut in code units passes both. An emoji is never split at the cut.
 */
export function truncate(text: string, limit: number): string {
  return truncateText(text, limit, "utf-16");
}
