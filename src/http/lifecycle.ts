import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on host:port; resolves with the bound address, rejects with the listen error. */
export function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting and waits for in-flight requests. Connections that finish their request become
 * idle and are closed at once (rather than after keep-alive), and the drain time-out cuts the rest,
 * with `cut` for those node:http no longer tracks (upgraded connections).
 */
export function drain(server: Server, timeoutMs: number, cut: () => void = () => {}): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const sweep = setInterval(() => server.closeIdleConnections(), 25);
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      cut();
    }, timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}
