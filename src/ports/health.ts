/** What `/healthz` and `/readyz` answer: `ok`, and each check as "ok" or the reason it is not. */
export interface HealthReport {
  ok: boolean;
  checks: Record<string, string>;
}

/** The two questions a load balancer or an orchestrator asks. */
export interface HealthProbe {
  /** Alive: the database answers. A failing live check means restart the process. */
  live(): Promise<HealthReport>;
  /** Ready: alive, and every configured platform is connected. A failing ready check means send it no traffic. */
  ready(): Promise<HealthReport>;
}
