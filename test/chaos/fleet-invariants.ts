import type { RecordedRequest } from "../fakes/fake-anthropic.js";
import type { ModelCallRecord } from "./chaos-model.js";
import type { ProcessLife } from "./fleet-chaos-rig.js";

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
