import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { ASK_INPUT, priorHistory, summarise, type ThroughputResult, type Workload } from "./workload.js";

/**
 * The physical reference: a sessions row, append-only messages and an asks row, on plain better-sqlite3
 * with prepared statements and the same pragmas. Each resume claims the ask, appends the answer, reads the
 * history (the model needs it), and appends the next assistant message and ask.
 */
export function rawThroughput(path: string, workload: Workload): ThroughputResult {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`
    CREATE TABLE sessions (id TEXT PRIMARY KEY, status TEXT NOT NULL, message_count INTEGER NOT NULL);
    CREATE TABLE messages (session_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
    CREATE TABLE asks (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, spec TEXT NOT NULL, status TEXT NOT NULL, answer TEXT);`);
  const insertSession = db.prepare("INSERT INTO sessions (id, status, message_count) VALUES (?, 'idle', 0)");
  const session = db.prepare<[string], { message_count: number }>("SELECT message_count FROM sessions WHERE id = ?");
  const insertMessage = db.prepare("INSERT INTO messages (session_id, seq, role, content) VALUES (?, ?, ?, ?)");
  const bump = db.prepare("UPDATE sessions SET message_count = message_count + ?, status = ? WHERE id = ?");
  const history = db.prepare<[string], { role: string; content: string }>(
    "SELECT role, content FROM messages WHERE session_id = ? ORDER BY seq",
  );
  const insertAsk = db.prepare("INSERT INTO asks (id, session_id, spec, status) VALUES (?, ?, ?, 'pending')");
  const claim = db.prepare("UPDATE asks SET status = 'answered', answer = ? WHERE id = ? AND status = 'pending'");
  const append = (id: string, messages: Array<{ role: string; content: unknown }>, status: string) => {
    let seq = session.get(id)!.message_count;
    for (const message of messages) insertMessage.run(id, seq++, message.role, JSON.stringify(message.content));
    bump.run(messages.length, status, id);
  };
  const suspend = db.transaction((id: string, askId: string) => {
    append(id, [{ role: "assistant", content: [{ type: "tool_use", id: askId, name: "ask_user", input: ASK_INPUT }] }], "waiting");
    insertAsk.run(askId, id, JSON.stringify(ASK_INPUT));
  });
  const resume = db.transaction((id: string, askId: string) => {
    if (claim.run('{"ok":true,"value":"production"}', askId).changes !== 1) throw new Error("lost claim");
    append(
      id,
      [{ role: "user", content: [{ type: "tool_result", tool_use_id: askId, content: '{"ok":true,"value":"production"}' }] }],
      "running",
    );
  });
  const finish = db.transaction((id: string) =>
    append(id, [{ role: "assistant", content: [{ type: "text", text: "Deployed." }] }], "idle"),
  );

  const prior = priorHistory(workload.history);
  const latencies: number[] = [];
  let elapsed = 0;
  for (let index = 0; index < workload.sessions; index++) {
    const id = `S${index}`;
    db.transaction(() => {
      insertSession.run(id);
      append(
        id,
        [
          ...prior.map((message) => ({ role: message.role, content: message.content })),
          { role: "user", content: [{ type: "text", text: "deploy" }] },
        ],
        "running",
      );
    })();
    history.all(id).map((row) => JSON.parse(row.content));
    suspend(id, `A${index}-0`);
    for (let ask = 0; ask < workload.asksPerSession; ask++) {
      const started = performance.now();
      resume(id, `A${index}-${ask}`);
      const messages = history.all(id).map((row) => ({ role: row.role, content: JSON.parse(row.content) }));
      if (messages.length === 0) throw new Error("empty history");
      if (ask + 1 < workload.asksPerSession) suspend(id, `A${index}-${ask + 1}`);
      else finish(id);
      const took = performance.now() - started;
      latencies.push(took);
      elapsed += took;
    }
  }
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return summarise("raw better-sqlite3", workload, latencies, elapsed / 1000, statSync(path).size);
}
