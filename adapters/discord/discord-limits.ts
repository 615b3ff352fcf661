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

/** Cuts text to a limit, marking the cut with an ellipsis. */
export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, Math.max(0, limit - 1))}…`;
}
