import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A server listening on 127.0.0.1, and the one way to stop it. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Cuts every open connection (keep-alive sockets, long-polls, SSE streams), then resolves once the server has closed. */
  close(): Promise<void>;
}

/**
 * Starts `server` on 127.0.0.1, on `port` or else a free one. Closing cuts open connections first, because a
 * keep-alive socket left by a client would otherwise hold `server.close` open until it times out.
 */
export async function listenLoopback(server: Server, port = 0): Promise<Loopback> {
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
