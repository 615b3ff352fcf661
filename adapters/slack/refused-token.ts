import { StartError } from "../../src/ports/errors.js";
import { errorCode } from "./actor-directory.js";

/** Slack's answers meaning the token itself is wrong (not that Slack is down): retrying cannot help. */
const REFUSED_TOKEN_ERRORS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type",
  "team_disabled",
  "user_removed_from_team",
]);

const WHERE_TO_FIND = {
  SLACK_BOT_TOKEN: "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page",
  SLACK_APP_TOKEN: "create an app-level token (xapp-…) with connections:write under the app's Basic Information",
};

/** A StartError naming the variable whose token Slack refused; any other failure is returned unchanged. */
export function refusedToken(error: unknown, variable: keyof typeof WHERE_TO_FIND): unknown {
  const code = errorCode(error);
  if (!REFUSED_TOKEN_ERRORS.has(code)) return error;
  return new StartError(`Slack refused ${variable} (${code}): ${WHERE_TO_FIND[variable]}`, { cause: error });
}

/** Whether a log line is about a refused token: start() reports that itself, in one line naming the variable. */
export function mentionsRefusedToken(line: string): boolean {
  return [...REFUSED_TOKEN_ERRORS].some((code) => line.includes(code));
}
