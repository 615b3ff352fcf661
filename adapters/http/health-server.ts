import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { HealthProbe } from "../../src/ports/health.js";
import { healthHandler } from "./health-routes.js";

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** A listener that serves only /healthz and /readyz: for Socket Mode and Discord, which need no other HTTP. */
export async function startHealthServer(probe: HealthProbe, port: number, host: string): Promise<HealthServer> {
  const server = createServer(healthHandler(probe));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
