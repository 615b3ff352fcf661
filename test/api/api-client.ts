import { hashSecret, type TokenHash } from "../../src/api/api-tokens.js";

export const CI_SECRET = "ci-secret-0123456789abcdef";
export const OTHER_SECRET = "other-secret-0123456789abcdef";
/** API_TOKENS as the harness takes them: two tokens, to check neither sees the other's asks. */
export const API_TOKENS: TokenHash[] = [
  { name: "ci", secretHash: hashSecret(CI_SECRET) },
  { name: "other", secretHash: hashSecret(OTHER_SECRET) },
];

export interface ApiResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A caller of the HTTP API, as a CI job would be: fetch, JSON, a bearer token. */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    /** null: no Authorization header at all. */
    private readonly secret: string | null = CI_SECRET,
  ) {}

  create(body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    return this.call("POST", "/v1/asks", JSON.stringify(body), headers);
  }

  get(id: string, waitSeconds?: number): Promise<ApiResponse> {
    return this.call("GET", `/v1/asks/${encodeURIComponent(id)}${waitSeconds === undefined ? "" : `?wait=${waitSeconds}`}`);
  }

  cancel(id: string): Promise<ApiResponse> {
    return this.call("DELETE", `/v1/asks/${encodeURIComponent(id)}`);
  }

  async call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(this.secret === null ? {} : { authorization: `Bearer ${this.secret}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers };
  }
}
