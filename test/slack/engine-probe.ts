import type { Conversation } from "../../src/ports/conversation.js";

export interface EngineCall {
  method: "handleMessage" | "answer" | "cancel" | "stop";
  result: unknown;
}

const PROBED = new Set<string>(["handleMessage", "answer", "cancel", "stop"]);

/**
 * The same engine, recording what each inbound call returned. Bolt answers Slack at ack(), before its
 * listener finishes, so tests wait on these records instead of on the HTTP response.
 */
export function probeEngine(engine: Conversation, calls: EngineCall[]): Conversation {
  return new Proxy(engine, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof key === "string" && PROBED.has(key)) {
        return async (...args: unknown[]) => {
          const result = await method.apply(target, args);
          calls.push({ method: key as EngineCall["method"], result });
          return result;
        };
      }
      return method.bind(target);
    },
  });
}
