import { createHmac } from "node:crypto";

/**
 * The headers of a callback (DESIGN §12): `Parley-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`, keyed
 * with the hex SHA-256 of the token's secret, which the receiver can compute and Parley keeps.
 */
export function callbackHeaders(body: string, secretHash: string, timestamp: number): Record<string, string> {
  const signature = createHmac("sha256", secretHash).update(`${timestamp}.${body}`).digest("hex");
  return { "content-type": "application/json", "parley-timestamp": String(timestamp), "parley-signature": `v1=${signature}` };
}
