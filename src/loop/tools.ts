import { z } from "zod";
import { ASK_USER_INPUT_SCHEMA } from "../ask/spec.js";
import type { ToolDefinition } from "../ports/model-client.js";
import type { ToolHints } from "../ports/tool-provider.js";

/** A tool the agent may call; its input is parsed by its zod schema before `run`. */
export interface Tool {
  definition: ToolDefinition;
  /** What the tool does to the world; a read-only tool runs without approval unless a rule says otherwise. */
  hints?: ToolHints | undefined;
  run(input: unknown): Promise<string>;
}

export const ASK_USER_TOOL_NAME = "ask_user";

/** Defines a tool from a zod object schema; anything else is refused at definition time. */
export function defineTool<Schema extends z.ZodObject>(options: {
  name: string;
  description: string;
  input: Schema;
  hints?: ToolHints | undefined;
  run: (input: z.infer<Schema>) => Promise<string> | string;
}): Tool {
  if (!(options.input instanceof z.ZodObject)) throw new TypeError(`tool ${options.name}: input must be a zod object schema`);
  const inputSchema = z.toJSONSchema(options.input) as Record<string, unknown>;
  delete inputSchema.$schema;
  return {
    definition: { name: options.name, description: options.description, inputSchema },
    hints: options.hints,
    async run(input) {
      const parsed = options.input.safeParse(input);
      if (!parsed.success) throw new Error(`invalid input: ${z.prettifyError(parsed.error)}`);
      return options.run(parsed.data);
    },
  };
}

export const ASK_USER_DEFINITION: ToolDefinition = {
  name: ASK_USER_TOOL_NAME,
  description:
    "Stop and ask the people in this conversation one question, then wait for their answer. Use it only for real " +
    "ambiguity you cannot resolve yourself. Prefer a typed card: confirm (yes/no), select or buttons (pick one of " +
    "options), multiselect, input (free text), form (several fields: text, password, number, toggle), message " +
    "(inform and wait for Continue). The result is JSON: {ok:true,value} or {ok:false,cancelled|timeout|error}.",
  inputSchema: ASK_USER_INPUT_SCHEMA as unknown as Record<string, unknown>,
};

/** A harmless built-in so a fresh bot has one ordinary tool beside ask_user. */
export const CURRENT_TIME_TOOL = defineTool({
  name: "current_time",
  description: "Returns the current date and time in ISO 8601 (UTC).",
  input: z.object({}),
  hints: { readOnly: true, idempotent: true },
  run: () => new Date().toISOString(),
});
