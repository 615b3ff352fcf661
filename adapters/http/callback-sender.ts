import type { CallbackSender } from "../../src/ports/ask-api.js";

/** A receiver that has not answered in this long is tried again later. */
const CALLBACK_TIMEOUT_MS = 10_000;

/** POSTs callbacks with Node's fetch; any http(s) URL is accepted (DESIGN §12 leaves address filtering out). */
export const fetchCallbackSender: CallbackSender = {
  async send(url, body, headers) {
    const response = await fetch(url, {
      method: "POST",
      body,
      headers,
      redirect: "manual",
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.status;
  },
};
