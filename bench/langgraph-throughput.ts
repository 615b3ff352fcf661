import { statSync } from "node:fs";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ASK_INPUT, priorHistory, summarise, type ThroughputResult, type Workload } from "./workload.js";

interface Message {
  role: string;
  content: unknown;
}

/**
 * The same work on LangGraph JS: an agent node and an ask node that calls interrupt(), resumed with
 * Command({resume}), checkpointed by its SQLite saver (WAL, synchronous=NORMAL, as Parley).
 */
export async function langgraphThroughput(path: string, workload: Workload): Promise<ThroughputResult> {
  const State = Annotation.Root({
    messages: Annotation<Message[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
    asked: Annotation<number>({ reducer: (_, right) => right, default: () => 0 }),
  });
  const graph = new StateGraph(State)
    .addNode("agent", (state) => {
      if (state.asked >= workload.asksPerSession)
        return { messages: [{ role: "assistant", content: [{ type: "text", text: "Deployed." }] }] };
      return {
        messages: [{ role: "assistant", content: [{ type: "tool_use", id: `toolu_${state.asked}`, name: "ask_user", input: ASK_INPUT }] }],
      };
    })
    .addNode("ask", (state) => {
      const answer = interrupt<typeof ASK_INPUT, string>(ASK_INPUT);
      const content = [{ type: "tool_result", tool_use_id: `toolu_${state.asked}`, content: JSON.stringify({ ok: true, value: answer }) }];
      return { messages: [{ role: "user", content }], asked: state.asked + 1 };
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => (state.asked >= workload.asksPerSession ? END : "ask"))
    .addEdge("ask", "agent");
  const saver = SqliteSaver.fromConnString(path);
  const app = graph.compile({ checkpointer: saver });
  await app.getGraph();
  const prior = priorHistory(workload.history).map((message) => ({ role: message.role, content: message.content }));
  const latencies: number[] = [];
  let elapsed = 0;
  for (let index = 0; index < workload.sessions; index++) {
    const config = { configurable: { thread_id: `S${index}` } };
    await app.invoke({ messages: [...prior, { role: "user", content: [{ type: "text", text: "deploy" }] }] }, config);
    if (index === 0) saver.db.pragma("synchronous = NORMAL");
    for (let ask = 0; ask < workload.asksPerSession; ask++) {
      const started = performance.now();
      await app.invoke(new Command({ resume: "production" }), config);
      const took = performance.now() - started;
      latencies.push(took);
      elapsed += took;
    }
  }
  saver.db.pragma("wal_checkpoint(TRUNCATE)");
  saver.db.close();
  return summarise("LangGraph JS", workload, latencies, elapsed / 1000, statSync(path).size);
}
