// The Slack HTTP listener's front, run in a worker thread (ack-front.ts starts it). Plain JavaScript, so that it runs
// the same under `node`, tsx and the test runner. It owns the public port, so acknowledging a tap never waits for
// work on the main thread: a signed `block_actions` or slash command gets its empty 200 here, then goes to the main
// thread's listener (Bolt) on a loopback port, whose answer is dropped. Every other request is passed through whole,
// streamed both ways, so a mention is still acknowledged only once the main thread has stored it.
import { createHmac, timingSafeEqual } from "node:crypto";
import { Agent, createServer, request as forward } from "node:http";
import { parse as parseQuery } from "node:querystring";
import { parentPort, workerData } from "node:worker_threads";

const { host, port, innerPort, path, signingSecret, limitBytes } = workerData;
/** Requests whose answer goes back to the caller: as many connections as callers (long polls hold theirs). */
const passAgent = new Agent({ keepAlive: true });
/** Acknowledged taps: a burst queues here, in order, rather than overflow the main listener's accept queue. */
const tapAgent = new Agent({ keepAlive: true, maxSockets: 32 });
/** An acknowledged tap must reach the main thread: Slack will not send it again. */
const TAP_ATTEMPTS = 5;
/** Hop-by-hop headers: each side of the front manages its own connection. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "upgrade"]);
const endToEnd = (headers) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
/** Slack's rule, as Bolt applies it: a request signed more than five minutes ago is refused as a replay. */
const MAX_AGE_S = 5 * 60;

/** Bolt's check (`verifySlackRequest`): v0 HMAC-SHA256 of `v0:<timestamp>:<body>`, and a timestamp not too old. */
function isSigned(headers, body) {
  const signature = headers["x-slack-signature"];
  const timestamp = Number(headers["x-slack-request-timestamp"]);
  if (typeof signature !== "string" || !Number.isInteger(timestamp)) return false;
  if (timestamp < Math.floor(Date.now() / 1000) - MAX_AGE_S) return false;
  const expected = Buffer.from(`v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A tap or a slash command: Parley's answer to either is an empty 200, whatever follows. */
function answeredEmpty(headers, body) {
  if (headers["content-type"] !== "application/x-www-form-urlencoded") return false;
  const form = parseQuery(body);
  if (form.payload === undefined) return typeof form.command === "string";
  if (typeof form.payload !== "string") return false;
  try {
    return JSON.parse(form.payload)?.type === "block_actions";
  } catch {
    return false;
  }
}

/** Sends the request on to the main thread's listener and its answer back to the caller, streamed both ways. */
function pass(request, body, response) {
  const inner = forward(innerRequest(request, passAgent));
  inner.on("response", (answer) => {
    response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
    answer.pipe(response);
  });
  inner.on("error", () => {
    if (!response.headersSent) response.writeHead(502, { connection: "close" }).end();
    else response.destroy();
  });
  // The caller hung up: the main thread's work for it is moot (a long poll, a stream).
  response.on("close", () => {
    if (!response.writableFinished) inner.destroy();
  });
  if (body === undefined) request.pipe(inner);
  else inner.end(body);
}

/**
 * Hands an acknowledged tap to the main thread, whose answer is dropped. A connection that fails is tried again: a
 * tap that reached Bolt twice is claimed once, and the second is told it was already answered.
 */
function handOn(request, body, attempt = 1) {
  if (attempt === 1) handing++;
  const inner = forward(innerRequest(request, tapAgent));
  inner.on("response", (answer) => {
    answer.resume();
    handedOn();
  });
  inner.on("error", (error) => {
    if (attempt < TAP_ATTEMPTS) return setTimeout(() => handOn(request, body, attempt + 1), 100 * attempt);
    parentPort.postMessage({ kind: "lost", code: error.code });
    handedOn();
  });
  inner.end(body);
}

/** Acknowledged taps not yet handed on: closing waits for them. */
let handing = 0;
let closed = false;
function handedOn() {
  handing--;
  if (closed && handing === 0) process.exit(0);
}

function innerRequest(request, agent) {
  return { host: "127.0.0.1", port: innerPort, method: request.method, path: request.url, headers: endToEnd(request.headers), agent };
}

/** Refuses a body larger than any Slack payload without reading it, as the main thread's guard would. */
function refuseTooLarge(request, response) {
  if (response.headersSent) return;
  // Ended, not destroyed: a reset while the client still sends can reach it before the 413 (request-guard.ts).
  response.once("finish", () => {
    request.socket.end();
    setTimeout(() => request.socket.destroy(), 2000).unref();
  });
  response.writeHead(413, { connection: "close" }).end();
}

/** Requests not yet answered: at close, once none is left, every connection can go. */
let answering = 0;
const server = createServer((request, response) => {
  answering++;
  response.once("close", () => answering--);
  // No route takes a body this large: refused here, before the main thread would have to read it.
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limitBytes) return refuseTooLarge(request, response);
  if (request.method !== "POST" || (request.url ?? "").split("?")[0] !== path) return pass(request, undefined, response);
  const chunks = [];
  let size = 0;
  request.on("data", (chunk) => {
    size += chunk.length;
    if (size > limitBytes) refuseTooLarge(request, response);
    else chunks.push(chunk);
  });
  request.on("error", () => response.destroy());
  request.on("end", () => {
    if (size > limitBytes) return;
    const body = Buffer.concat(chunks);
    const text = body.toString("utf8");
    if (answeredEmpty(request.headers, text) && isSigned(request.headers, text)) {
      response.writeHead(200).end();
      // After the acks of every request already read: handing on costs more than acking.
      setImmediate(() => handOn(request, body));
    } else pass(request, body, response);
  });
});
server.keepAliveTimeout = 65_000;

server.on("error", (error) => parentPort.postMessage({ kind: "error", code: error.code, message: error.message }));
server.listen(port, host, () => parentPort.postMessage({ kind: "listening", port: server.address().port }));
parentPort.on("message", () => {
  server.close(() => {
    closed = true;
    if (handing === 0) process.exit(0);
  });
  // A request in flight (a long poll) is answered first; then no connection is waited for, not even one a client
  // has just opened for its next request (that would hold close() open until the header timeout).
  const drain = setInterval(() => {
    if (answering === 0) server.closeAllConnections();
    else server.closeIdleConnections();
  }, 100);
  server.once("close", () => clearInterval(drain));
});
