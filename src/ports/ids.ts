/**
 * The ids the core hands around, branded so that one cannot pass for another: `stop(askId)` does not compile.
 * A plain string becomes an id once, where it enters: an adapter parsing a payload, a store reading a row, the
 * core generating one. The brand exists only for the compiler; at run time an id is the string it was.
 */
export type SessionId = string & { readonly __brand: "SessionId" };
/** An ask's own id, separate from the model's tool_use id (an ask may outlive one model call). */
export type AskId = string & { readonly __brand: "AskId" };
/** A person's id on their platform (a Slack `U…`, a Discord snowflake), or `api:<token>` for an API caller. */
export type UserId = string & { readonly __brand: "UserId" };

/** The platforms a conversation lives on. */
export type Platform = "slack" | "discord" | "terminal";

/** Names a string read at a boundary (a payload, a stored row, a generated value) as a session id. */
export function asSessionId(value: string): SessionId {
  return value as SessionId;
}

/** Names a string read at a boundary (a payload, a stored row, a generated value) as an ask id. */
export function asAskId(value: string): AskId {
  return value as AskId;
}

/** Names a string read at a boundary (a payload, a stored row) as a person's id. */
export function asUserId(value: string): UserId {
  return value as UserId;
}

/** Ask ids are 9 random bytes in base64url (the turn runner, the elicitation desk, API asks): 12 characters. */
const ASK_ID = /^[A-Za-z0-9_-]{12}$/;
/** Session ids are random UUIDs (the message router, API asks). */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An ask id a person typed, told by its shape; undefined when it is not one. */
export function parseAskId(text: string): AskId | undefined {
  return ASK_ID.test(text) ? asAskId(text) : undefined;
}

/** A session id a person typed, told by its shape; undefined when it is not one. */
export function parseSessionId(text: string): SessionId | undefined {
  return SESSION_ID.test(text) ? asSessionId(text) : undefined;
}

/** A stored or typed platform name, checked against the union. */
export function parsePlatform(text: string): Platform | undefined {
  return text === "slack" || text === "discord" || text === "terminal" ? text : undefined;
}
