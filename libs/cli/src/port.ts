import net from "node:net";
import { RewindError } from "@rewind/core";

/** Why a server command cannot listen, and what to do: the port's owner, or another port. */
export function portTaken(host: string, port: number): RewindError {
  return new RewindError(
    "INVALID_INPUT",
    `Port ${port} on ${host} is already in use by another process (another rewind dev or api?): ` +
      `stop it (\`lsof -i :${port}\` names it) or pass --port with a free port (--port 0 picks one)`,
  );
}

/**
 * Fails at once when `port` is taken, before the command opens its database and queue: a server
 * that cannot listen should say so in a second, not after start-up (and then hang on the handles
 * start-up left open).
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw portTaken(host, port);
    throw error;
  });
}

/** The port a --port option names: an integer from 0 to 65535. */
export function parsePort(value: string | undefined): number {
  const port = Number(value ?? 7420);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RewindError(
      "INVALID_INPUT",
      `--port must be an integer from 0 to 65535 (0: any free port), got ${JSON.stringify(value)}`,
    );
  }
  return port;
}
