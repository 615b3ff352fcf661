import { type FakeAnthropic, type RecordedRequest, type ScriptedTurn, text, toolUse } from "../fakes/fake-anthropic.js";

/**
 * Asks per turn: the fake model asks this many times (one of them may be a tool call needing approval, see
 * toolStepFor), then answers. Within MAX_ASK_USER_PER_TURN (3).
 */
export const ASKS_PER_SESSION = 3;
/** The marker in the question of asks the driver never answers, so the sweeper expires them. */
export const LET_EXPIRE = "[let-expire]";
export const SHORT_TIMEOUT_S = 6;

type Block = Record<string, unknown>;

/** What the fake model reads from a request: which chaos session it is and how many asks came back. */
export interface RequestFacts {
  label: string | undefined;
  toolResults: number;
}

export function requestFacts(request: RecordedRequest): RequestFacts {
  let label: string | undefined;
  let toolResults = 0;
  for (const message of request.body.messages) {
    const blocks: Block[] = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    for (const block of blocks) {
      if (block.type === "text" && label === undefined && message.role === "user") {
        label = /chaos:(s\d+)/.exec(String(block.text))?.[1];
      }
      if (block.type === "tool_result") toolResults++;
    }
  }
  return { label, toolResults };
}

/** The `ask_user` input for a session's n-th ask: a function of the request only, so re-runs ask the same. */
export function specFor(label: string, index: number): Record<string, unknown> {
  const roll = hash(`${label}:${index}`) % 100;
  const tag = `${label} #${index}`;
  if (roll < 15) return { type: "confirm", question: `${LET_EXPIRE} ${tag}: anyone there?`, timeout_s: SHORT_TIMEOUT_S };
  if (roll < 40) return { type: "confirm", question: `${tag}: go ahead?` };
  if (roll < 62) return { type: "buttons", question: `${tag}: which colour?`, options: ["red", "green", "blue"] };
  if (roll < 80) {
    return {
      type: "select",
      question: `${tag}: which size?`,
      options: [
        { value: "s", label: "Small" },
        { value: "m", label: "Medium" },
        { value: "l", label: "Large" },
        { value: "xl", label: "Huge" },
      ],
    };
  }
  if (roll < 92) return { question: `${tag}: which way?`, choices: ["left", "right"] };
  return { type: "message", question: `${tag}: heads up, the build is slow today.` };
}

/**
 * The tool call a session makes instead of its second ask, if any: about a third of sessions call the chaos
 * server's `deploy` (not idempotent) and a sixth its `restart` (idempotent), both needing a person's Approve.
 */
export function toolStepFor(label: string, index: number): { name: string; input: Record<string, string> } | undefined {
  if (index !== 1) return undefined;
  const roll = hash(`${label}:tool`) % 100;
  if (roll < 33) return { name: "ops__deploy", input: { target: label } };
  if (roll < 50) return { name: "ops__restart", input: { service: label } };
  return undefined;
}

export interface ModelTrap {
  holdMs: number;
  onHit: () => void;
}

/** One model request as the chaos test saw it arrive. */
export interface ModelCallRecord {
  /** Index into FakeAnthropic.requests. */
  index: number;
  /** The bot process (1, 2, …) that sent it. */
  epoch: number;
  label: string | undefined;
  at: number;
  /** The SDK's own retry counter (`x-stainless-retry-count`), when it sends one. */
  retry: string | undefined;
  /** What the fake model answered. */
  answer?: string;
}

/**
 * Scripts FakeAnthropic with one self-renewing turn: every request gets an answer computed from the request
 * itself (ask again while fewer than ASKS_PER_SESSION results came back, then reply), so it survives restarts
 * and re-runs. A trap holds the next answer for `holdMs`, to kill the bot mid-call.
 */
export class ChaosModel {
  readonly calls: ModelCallRecord[] = [];
  private trap: ModelTrap | undefined;
  private toolUseCounter = 0;

  /** `epoch` names the bot process alive now: it changes when a process is spawned, before it is healthy. */
  constructor(
    private readonly fake: FakeAnthropic,
    private readonly epoch: () => number,
  ) {
    const turn = (request: RecordedRequest): ScriptedTurn => {
      this.fake.script(turn);
      return this.answer(request);
    };
    this.fake.script(turn);
  }

  arm(trap: ModelTrap): void {
    this.trap = trap;
  }

  disarm(): void {
    this.trap = undefined;
  }

  private answer(request: RecordedRequest): ScriptedTurn {
    const facts = requestFacts(request);
    const retry = request.headers["x-stainless-retry-count"];
    const record: ModelCallRecord = {
      index: this.fake.requests.length - 1,
      epoch: this.epoch(),
      label: facts.label,
      at: Date.now(),
      retry: typeof retry === "string" ? retry : undefined,
    };
    this.calls.push(record);
    const trap = this.trap;
    this.trap = undefined;
    trap?.onHit();
    const delayMs = trap?.holdMs ?? 0;
    if (facts.label === undefined) return { content: [text("I do not know this conversation.")], stopReason: "end_turn", delayMs };
    if (facts.toolResults < ASKS_PER_SESSION) {
      const id = `toolu_chaos_${++this.toolUseCounter}`;
      record.answer = id;
      const tool = toolStepFor(facts.label, facts.toolResults);
      const use = tool ? toolUse(tool.name, tool.input, id) : toolUse("ask_user", specFor(facts.label, facts.toolResults), id);
      return { content: [use], stopReason: "tool_use", delayMs };
    }
    return { content: [text(`All done for ${facts.label}.`)], stopReason: "end_turn", delayMs };
  }
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 16777619);
  }
  return value >>> 0;
}
