import { StartError } from "./ports/errors.js";

/**
 * A StartError naming PORT or HOST when the HTTP listener could not bind, with what to change; any other failure
 * is returned unchanged. Node's own message (`listen EADDRINUSE: address already in use`) names neither.
 */
export function listenFailure(error: unknown, address: { port: number; host: string }): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const { port, host } = address;
  switch (code) {
    case "EADDRINUSE":
      return new StartError(`PORT=${port}: ${host}:${port} is already in use; stop what listens there or set PORT to a free port`, {
        cause: error,
      });
    case "EACCES":
      return new StartError(`PORT=${port}: listening on ${host}:${port} needs privileges; set PORT to 1024 or above`, { cause: error });
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new StartError(`HOST=${host}: not an address of this machine; set HOST to 127.0.0.1, or 0.0.0.0 for every address`, {
        cause: error,
      });
    default:
      return error;
  }
}
