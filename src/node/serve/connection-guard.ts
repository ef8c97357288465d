import { readFileSync } from 'node:fs';
import type http from 'node:http';
import type { Socket } from 'node:net';

/** The most connections a server holds by default, whatever the descriptor limit allows. */
const MAX_CONNECTIONS = 1000;

/**
 * The default cap on connections: 1000, or half the process's open-file limit when that is lower (Linux), so
 * that the worker pool, the journal and the trials keep descriptors however many sockets a client opens.
 */
export function defaultMaxConnections(): number {
  const limit = openFileLimit();
  return limit === undefined ? MAX_CONNECTIONS : Math.max(1, Math.min(MAX_CONNECTIONS, Math.floor(limit / 2)));
}

function openFileLimit(): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * Holds a server to `max` connections. A connection is idle until a request's headers have come in, and again
 * once its response has ended. At the cap, a new connection makes room by closing the connection idle longest
 * (one that never sent a byte, a slow sender, a kept-alive one): a flood of idle sockets cannot lock out a
 * client that asks something (`GET /health`). When every connection is busy with a request, the new one is
 * answered `503` and closed.
 */
export class ConnectionGuard {
  /** Idle connections, idle longest first (a Set iterates in insertion order). */
  readonly #idle = new Set<Socket>();
  readonly #busy = new Set<Socket>();
  readonly #refused = new WeakSet<Socket>();

  constructor(
    server: http.Server,
    private readonly max: number,
    private readonly retryAfterSec: number,
  ) {
    server.on('connection', (socket: Socket) => this.#connected(socket));
  }

  /** Marks a connection busy for one request; false when the connection was refused (its request is dropped). */
  admit(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const { socket } = req;
    if (this.#refused.has(socket)) {
      socket.destroy();
      return false;
    }
    this.#idle.delete(socket);
    this.#busy.add(socket);
    res.once('close', () => {
      if (this.#busy.delete(socket) && !socket.destroyed) this.#idle.add(socket);
    });
    return true;
  }

  #connected(socket: Socket): void {
    if (this.#idle.size + this.#busy.size >= this.max && !this.#evictIdlest()) {
      this.#refuse(socket);
      return;
    }
    this.#idle.add(socket);
    socket.once('close', () => {
      this.#idle.delete(socket);
      this.#busy.delete(socket);
    });
  }

  #evictIdlest(): boolean {
    const idlest = this.#idle.values().next().value;
    if (!idlest) return false;
    this.#idle.delete(idlest);
    idlest.destroy();
    return true;
  }

  /** A refusal the client can read, then the connection is closed (at the latest a second later). */
  #refuse(socket: Socket): void {
    this.#refused.add(socket);
    const body = JSON.stringify({ detail: `too many connections: this server holds at most ${this.max} at once; retry later` });
    const head = [
      'HTTP/1.1 503 Service Unavailable',
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
      `retry-after: ${this.retryAfterSec}`,
      'connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
    socket.setTimeout(1000, () => socket.destroy());
  }
}
