import { type SendOptions, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import type { DeliveryOutcome, RedeliveringSlackSocket } from "./redelivering-slack-socket.js";

/**
 * The chaos driver's sender over Socket Mode instead of signed HTTP: the same events, taps and commands, sent as
 * envelopes through `socket`. Each answers like the HTTP sender would: 200 with the ack's payload once the envelope
 * is acknowledged, 504 when Slack gave up on it (an event after its retries, a tap whose connection closed).
 * An event is redelivered by the socket itself, so the driver sees one pending request until the last attempt.
 */
export class SocketModeSender extends SlackRequestSender {
  constructor(private readonly socket: RedeliveringSlackSocket) {
    super("http://socket-mode.invalid");
  }

  override event(
    event: Record<string, unknown>,
    envelope: { teamId: string; eventId: string },
    options: SendOptions = {},
  ): Promise<Response> {
    const payload = {
      token: "unused-verification-token",
      team_id: envelope.teamId,
      api_app_id: "A_PARLEY",
      type: "event_callback",
      event_id: envelope.eventId,
      event_time: Math.floor(Date.now() / 1000),
      event,
      authorizations: [{ team_id: envelope.teamId, user_id: "U_PARLEY_BOT", is_bot: true }],
    };
    return this.socket.deliver("events_api", payload, options.retryNum ?? 0).then(asResponse);
  }

  override interaction(payload: Record<string, unknown>): Promise<Response> {
    return this.socket.deliver("interactive", payload).then(asResponse);
  }

  override command(fields: Record<string, string>): Promise<Response> {
    return this.socket.deliver("slash_commands", fields).then(asResponse);
  }

  override send(): Promise<Response> {
    return Promise.reject(new Error("Socket Mode sends envelopes, not HTTP requests"));
  }
}

function asResponse(outcome: DeliveryOutcome): Response {
  if (!outcome.acked) return new Response("", { status: 504 });
  return new Response(JSON.stringify(outcome.payload ?? {}), { status: 200, headers: { "content-type": "application/json" } });
}
