import { SlackRequestSender } from "../../test/fakes/fake-slack-signer.js";

// The people clicking, in a process of their own: the bench process serves the fake Slack and model, and a click
// sent from there would wait behind that work and measure it. Reads {url, mode, payloads} as JSON on stdin and
// writes each click's time to its 200, in the order sent.
interface Job {
  url: string;
  /** `burst`: every click at once; `spread`: evenly over one second; `serial`: one at a time. */
  mode: string;
  payloads: Array<Record<string, unknown>>;
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Job;
const sender = new SlackRequestSender(job.url);

async function click(payload: Record<string, unknown>, index: number): Promise<{ ms: number; ok: boolean }> {
  if (job.mode === "spread") await new Promise((resolve) => setTimeout(resolve, (index * 1000) / job.payloads.length));
  const started = performance.now();
  const response = await sender.interaction(payload);
  await response.arrayBuffer();
  return { ms: performance.now() - started, ok: response.status === 200 };
}

const timings: Array<{ ms: number; ok: boolean }> = [];
if (job.mode === "serial") for (const [index, payload] of job.payloads.entries()) timings.push(await click(payload, index));
else timings.push(...(await Promise.all(job.payloads.map(click))));
process.stdout.write(`${JSON.stringify(timings)}\n`);
