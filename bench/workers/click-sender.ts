import { connect, type Socket } from "node:net";
import { FAKE_SIGNING_SECRET, signSlackRequest } from "../../test/fakes/fake-slack-signer.js";

// The people clicking, in a process of their own: the bench process serves the fake Slack and model, and a click
// sent from there would wait behind that work and measure it. Reads {url, mode, payloads} as JSON on stdin and
// writes each click's time to its 200, in the order sent.
//
// Each click has its connection opened and its request signed and written out before the clock starts, so the time
// is the bot's alone: a client that opens 500 connections at once (fetch does) takes about 450 ms to do it here,
// whatever the server.
interface Job {
  url: string;
  /** `burst`: every click at once; `spread`: evenly over one second; `serial`: one at a time. */
  mode: string;
  payloads: Array<Record<string, unknown>>;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Job;
const { hostname, port } = new URL(job.url);

function request(payload: Record<string, unknown>): Buffer {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const headers = {
    host: `${hostname}:${port}`,
    "content-type": "application/x-www-form-urlencoded",
    "content-length": String(Buffer.byteLength(body)),
    ...signSlackRequest(FAKE_SIGNING_SECRET, body, Math.floor(Date.now() / 1000)),
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return Buffer.from(`POST /slack/events HTTP/1.1\r\n${head.join("")}\r\n${body}`);
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Writes the request and resolves with the time to the status line of its answer. */
function click(socket: Socket, bytes: Buffer): Promise<{ ms: number; ok: boolean }> {
  return new Promise((resolve) => {
    let answer = "";
    const started = performance.now();
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
      if (!answer.includes("\r\n")) return;
      resolve({ ms: performance.now() - started, ok: answer.startsWith("HTTP/1.1 200") });
      socket.destroy();
    });
    socket.once("close", () => resolve({ ms: performance.now() - started, ok: false }));
    socket.write(bytes);
  });
}

const requests = job.payloads.map(request);
const timings: Array<{ ms: number; ok: boolean }> = [];
if (job.mode === "serial") {
  for (const bytes of requests) timings.push(await click(await open(), bytes));
} else {
  const sockets = await Promise.all(requests.map(() => open()));
  const at = (index: number) => (job.mode === "spread" ? (index * 1000) / requests.length : 0);
  const started = performance.now();
  timings.push(
    ...(await Promise.all(
      requests.map(async (bytes, index) => {
        const wait = started + at(index) - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        return click(sockets[index]!, bytes);
      }),
    )),
  );
}
process.stdout.write(`${JSON.stringify(timings)}\n`);
