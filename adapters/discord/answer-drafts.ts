import type { DraftValues } from "./render-modal.js";

const MAX_DRAFTS = 1000;

/**
 * Half-finished answers, per ask and person: the parts of a chained form already submitted, and the
 * options picked in each select of a multiselect before Done. Kept in memory on purpose: they are
 * worth little after a restart (the person fills the form again) and never hold more than a modal's worth.
 * Passwords typed in part 1 of a chain stay here until the last part is submitted or the ask ends.
 */
export class AnswerDrafts {
  private readonly forms = new Map<string, DraftValues>();
  private readonly picks = new Map<string, Map<number, number[]>>();

  formValues(askId: string, userId: string): DraftValues {
    return { ...this.forms.get(key(askId, userId)) };
  }

  mergeForm(askId: string, userId: string, values: DraftValues): DraftValues {
    const merged = { ...this.forms.get(key(askId, userId)), ...values };
    remember(this.forms, key(askId, userId), merged);
    return { ...merged };
  }

  setPicks(askId: string, userId: string, group: number, indexes: number[]): void {
    const groups = this.picks.get(key(askId, userId)) ?? new Map<number, number[]>();
    groups.set(group, indexes);
    remember(this.picks, key(askId, userId), groups);
  }

  allPicks(askId: string, userId: string): number[] {
    return [...(this.picks.get(key(askId, userId))?.values() ?? [])].flat().sort((left, right) => left - right);
  }

  /** Forgets everything typed for an ask, by everyone: it was answered or has ended. */
  forget(askId: string): void {
    for (const map of [this.forms, this.picks]) {
      for (const entry of map.keys()) if (entry.startsWith(`${askId}\u0000`)) map.delete(entry);
    }
  }
}

function key(askId: string, userId: string): string {
  return `${askId}\u0000${userId}`;
}

/** Map keeps insertion order, so deleting the first key drops the oldest draft. */
function remember<T>(map: Map<string, T>, entry: string, value: T): void {
  map.delete(entry);
  map.set(entry, value);
  if (map.size > MAX_DRAFTS) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}
