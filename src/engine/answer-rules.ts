import type { Actor } from "../ports/conversation.js";
import { joinRich, mention, type RichText, rich } from "../ports/rich-text.js";
import type { Ask, Session } from "../ports/session-store.js";
import type { RuntimeSettings } from "./settings.js";

/** Who may answer, cancel or stop: one rule for taps, replies, forms and Stop. */
export class AnswerRules {
  private readonly adminUserIds: Set<string>;

  constructor(
    private readonly settings: RuntimeSettings,
    adminUserIds: readonly string[],
  ) {
    this.adminUserIds = new Set(adminUserIds);
  }

  /** Admin comes from the platform (the adapter's `isAdmin`) or from ADMIN_USER_IDS, never from the model. */
  isAdmin(actor: Actor): boolean {
    return actor.isAdmin === true || this.adminUserIds.has(actor.id);
  }

  /**
   * An API ask names its answerers (none: anyone who sees the card); the agent's own asks follow ANSWER_POLICY
   * (the session's owner, or anyone in the thread). Admins always may.
   */
  mayAnswer(session: Session, actor: Actor, ask?: Ask): boolean {
    const external = ask?.spec.external;
    if (external) return external.answerers.length === 0 || external.answerers.includes(actor.id) || this.isAdmin(actor);
    return this.settings.get().answerPolicy === "thread" || actor.id === session.ownerId || this.isAdmin(actor);
  }

  whoMayAnswer(session: Session, what: "answer" | "answer or stop", ask?: Ask): RichText {
    const people = ask?.spec.external?.answerers ?? [session.ownerId];
    return rich`Only ${joinRich(
      people.map((id) => rich`${mention(id)}`),
      ", ",
    )} or an admin can ${what} this.`;
  }
}
