/**
 * A byte-for-byte socket forwarder. The harness runs one on the host (a unix socket in the trial's
 * environment → the model endpoint's TCP port) and the trial runner runs one inside a trial without network
 * (a loopback port → that unix socket), so the model endpoint is reachable while nothing else is.
 */
import net from 'node:net';

/** A running forwarder. */
export interface Forwarder {
  /** The loopback port it listens on, when it listens on TCP. */
  port: number | undefined;
  close(): Promise<void>;
}

/** Listens at `listen` and pipes every connection to a new connection to `target`. */
export function startForwarder(listen: net.ListenOptions, target: net.NetConnectOpts): Promise<Forwarder> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(target);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      // Either side failing ends both; the client sees a closed connection, as with a dead server.
      socket.on('error', () => (inbound.destroy(), outbound.destroy()));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen, () => {
      server.unref();
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address !== null ? address.port : undefined,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The TCP address of an http(s) URL, for forwarding to it. */
export function tcpTargetOf(url: string): net.NetConnectOpts {
  const parsed = new URL(url);
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
}
