import { createHmac } from "node:crypto";

export const FAKE_SIGNING_SECRET = "test-signing-secret";

/** Slack's v0 request signature: HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret. */
export function signSlackRequest(secret: string, body: string, timestampSeconds: number): Record<string, string> {
  const signature = createHmac("sha256", secret).update(`v0:${timestampSeconds}:${body}`).digest("hex");
  return { "x-slack-signature": `v0=${signature}`, "x-slack-request-timestamp": String(timestampSeconds) };
}

export interface SendOptions {
  /** Sign with another secret, to play a forger. */
  secret?: string;
  /** Seconds since the epoch; an old one plays a replayed request. */
  timestampSeconds?: number;
  retryNum?: number;
}

/** Sends the real Bolt app what Slack would: signed Events API JSON, interactivity forms and slash commands. */
export class SlackRequestSender {
  constructor(
    private readonly url: string,
    private readonly secret: string = FAKE_SIGNING_SECRET,
  ) {}

  /** An Events API `event_callback` envelope around `event`. */
  event(event: Record<string, unknown>, envelope: { teamId: string; eventId: string }, options: SendOptions = {}): Promise<Response> {
    const body = JSON.stringify({
      token: "unused-verification-token",
      team_id: envelope.teamId,
      api_app_id: "A_PARLEY",
      type: "event_callback",
      event_id: envelope.eventId,
      event_time: Math.floor(Date.now() / 1000),
      event,
      authorizations: [{ team_id: envelope.teamId, user_id: "U_PARLEY_BOT", is_bot: true }],
    });
    return this.send(body, "application/json", options);
  }

  /** A `block_actions` or `view_submission` payload, form-encoded as `payload=<JSON>`. */
  interaction(payload: Record<string, unknown>, options: SendOptions = {}): Promise<Response> {
    return this.send(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), "application/x-www-form-urlencoded", options);
  }

  command(fields: Record<string, string>, options: SendOptions = {}): Promise<Response> {
    return this.send(new URLSearchParams(fields).toString(), "application/x-www-form-urlencoded", options);
  }

  send(body: string, contentType: string, options: SendOptions = {}): Promise<Response> {
    const timestamp = options.timestampSeconds ?? Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      "content-type": contentType,
      ...signSlackRequest(options.secret ?? this.secret, body, timestamp),
      ...(options.retryNum !== undefined ? { "x-slack-retry-num": String(options.retryNum), "x-slack-retry-reason": "http_timeout" } : {}),
    };
    return fetch(`${this.url}/slack/events`, { method: "POST", headers, body });
  }
}
