import { StartError } from "../../src/ports/errors.js";

/** Gateway close codes that mean the set-up is wrong: discord.js stops reconnecting, and would wait for ready forever. */
const AUTHENTICATION_FAILED = 4004;
const DISALLOWED_INTENTS = 4014;

/** What to do about a gateway that closed for good during start, in words naming the variable to change. */
export function gatewayRefusal(code: number): Error {
  if (code === DISALLOWED_INTENTS)
    return new StartError(
      "Discord refused the Message Content intent (gateway close 4014): enable it under Bot → Privileged Gateway Intents " +
        "in the developer portal, or set DISCORD_MESSAGE_CONTENT=false",
    );
  if (code === AUTHENTICATION_FAILED) return refusedToken(`gateway close ${code}`);
  return new StartError(`the Discord gateway closed with code ${code} and will not reconnect`);
}

/** discord.js's error for a token the REST API answers 401 to, as a StartError naming DISCORD_TOKEN; else unchanged. */
export function loginRefusal(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code === "TokenInvalid" ? refusedToken("401 Unauthorized") : error;
}

function refusedToken(detail: string): StartError {
  return new StartError(`Discord refused DISCORD_TOKEN (${detail}): copy the token from the Bot page of the developer portal`);
}
