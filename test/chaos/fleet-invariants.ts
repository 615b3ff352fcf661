import type { RecordedRequest } from "../fakes/fake-anthropic.js";
import type { ModelCallRecord } from "./chaos-model.js";
import type { ProcessLife, SlackCallByMember } from "./fleet-chaos-rig.js";

export interface TurnReport {
  violations: string[];
  stats: {
    /** A session's next model call came from another process that had the previous call's answer (a resume, a new turn). */
    handoffs: number;
    /** … or came after the previous caller was killed (a turn taken over). */
    takeovers: number;
    /** Model calls per member (A, B, C). */
    modelCallsPerProcess: Record<string, number>;
  };
}

/**
 * "A turn runs in one process at a time" (DESIGN §13), read from the model calls: each session's calls in the
 * order the fake model received them, each named by the process life that sent it. When two calls in a row come from
 * different processes, the second is right only if the first's process had been killed by then (a takeover), or if
 * the second carries the first one's answer as its next message (the first process committed that step and let go:
 * it suspended on an ask, or ended the turn). Anything else means two live processes were running the session's
 * turn: one call in flight while the other started, or a step run again from the same history.
 */
export function checkTurnExclusivity(input: {
  modelRequests: readonly RecordedRequest[];
  modelCalls: readonly ModelCallRecord[];
  lives: readonly ProcessLife[];
}): TurnReport {
  const violations: string[] = [];
  const stats: TurnReport["stats"] = { handoffs: 0, takeovers: 0, modelCallsPerProcess: {} };
  const memberOf = (life: number) => input.lives[life - 1]?.member ?? `?${life}`;
  const byLabel = new Map<string, ModelCallRecord[]>();
  for (const call of input.modelCalls) {
    const member = memberOf(call.epoch);
    stats.modelCallsPerProcess[member] = (stats.modelCallsPerProcess[member] ?? 0) + 1;
    if (call.label !== undefined) byLabel.set(call.label, [...(byLabel.get(call.label) ?? []), call]);
  }
  for (const [label, calls] of byLabel) {
    calls.sort((left, right) => left.index - right.index);
    for (let position = 1; position < calls.length; position++) {
      const previous = calls[position - 1];
      const next = calls[position];
      if (!previous || !next || previous.epoch === next.epoch) continue;
      const ended = input.lives[previous.epoch - 1]?.endedAt;
      if (ended !== undefined && ended <= next.at) {
        stats.takeovers++;
        continue;
      }
      const previousRequest = input.modelRequests[previous.index];
      const nextRequest = input.modelRequests[next.index];
      if (previousRequest && nextRequest && carriesAnswer(nextRequest, previousRequest.body.messages.length, previous.answer, label)) {
        stats.handoffs++;
        continue;
      }
      violations.push(
        `session ${label}: model call ${next.index} from life ${next.epoch} (${memberOf(next.epoch)}) at +${next.at - previous.at} ms ` +
          `after call ${previous.index} from life ${previous.epoch} (${memberOf(previous.epoch)}), still alive, ` +
          `without that call's answer: two processes ran the turn`,
      );
    }
  }
  return { violations, stats };
}

/**
 * Whether `request` carries, right after the history the previous call was sent, the assistant message the fake model
 * answered it with: its tool_use id (see ChaosModel), or its final text when it answered without a tool.
 */
function carriesAnswer(request: RecordedRequest, previousLength: number, toolUseId: string | undefined, label: string): boolean {
  const message = request.body.messages[previousLength];
  if (message?.role !== "assistant") return false;
  const content = JSON.stringify(message.content);
  return toolUseId === undefined ? content.includes(`All done for ${label}.`) : content.includes(JSON.stringify(toolUseId));
}

/** How long after answering /healthz a process may still be in its start-up recovery. */
const RECOVERY_WINDOW_MS = 3000;
/** Two posts of one card this close together were racing. */
const RACE_MS = 2000;

/**
 * Cards posted more than once because a process starting up reposted, as a crash's leftover, a card that a live
 * process had just committed and was posting itself (Maintenance.recover reposts every unposted ask at once, and its
 * look for an existing card ran before the live process's post landed): two members posted the ask's card, one of
 * them within its start-up, both within RACE_MS. Returns the extra posts so explained, and the asks. Any other extra
 * post fails the suite.
 */
export function startupRaceCardPosts(
  log: readonly SlackCallByMember[],
  lives: readonly ProcessLife[],
): { extraPosts: number; asks: string[] } {
  const postsByAsk = new Map<string, SlackCallByMember[]>();
  for (const entry of log) {
    if (entry.method !== "chat.postMessage" || entry.askId === undefined || !entry.outcome?.includes('"ok":true')) continue;
    postsByAsk.set(entry.askId, [...(postsByAsk.get(entry.askId) ?? []), entry]);
  }
  const inStartUp = (entry: SlackCallByMember) =>
    lives.some(
      (life) =>
        life.member === entry.member &&
        life.startedAt <= entry.at &&
        entry.at <= (life.healthyAt ?? life.endedAt ?? Number.POSITIVE_INFINITY) + RECOVERY_WINDOW_MS,
    );
  let extraPosts = 0;
  const asks: string[] = [];
  for (const [askId, posts] of postsByAsk) {
    const spanMs = (posts.at(-1)?.at ?? 0) - (posts[0]?.at ?? 0);
    // A race, not a card left by a dead process and missed by the look: a repost comes 4 s (a start-up) or 10 s (the
    // sweeper's grace) after the post it should have adopted.
    if (posts.length < 2 || new Set(posts.map((post) => post.member)).size < 2 || !posts.some(inStartUp) || spanMs > RACE_MS) continue;
    extraPosts += posts.length - 1;
    asks.push(askId);
  }
  return { extraPosts, asks };
}
