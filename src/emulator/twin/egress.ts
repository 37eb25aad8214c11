/**
 * The twin apiserver's way into the cluster network: kube-apiserver's egress selector sends all
 * `cluster` traffic (admission and conversion webhooks, aggregated APIs, kubelet and pod/service
 * proxy connections) as HTTP CONNECT requests over a Unix socket to this proxy, which runs in the
 * emulator process. The apiserver itself never opens a TCP connection to a pod or node address.
 *
 * Why: the apiserver refuses loopback addresses in EndpointSlices and Endpoints ("may not be in
 * the loopback range"), so the pods of the twin keep addresses of the cluster's real pod range
 * (`podSubnet`, e.g. 10.2.0.0/16), addresses that must never be dialled. The proxy decides what a
 * CONNECT reaches:
 *
 * - `<pod IP>:<port>` served by the webhook stand-in (./webhooks.ts): the connection is handed to
 *   its in-process TLS server (no socket of any kind to the pod address);
 * - a loopback address (a node's address, kwok's): a TCP connection to it;
 * - anything else: `502 connection refused`, which the apiserver reports as
 *   `proxy error … code 502: 502 connection refused` (the class of failure clients retry while a
 *   webhook's pods start).
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isLoopbackV4 } from './network.js';

/** Takes over a client connection for `host:port`, or declines (undefined = not served here). */
export type EgressHandler = (host: string, port: number) => ((socket: Socket) => void) | undefined;

/**
 * The Unix socket of the cluster in `clusterDir` (under `$TMPDIR`: socket paths are limited to
 * about 100 bytes, an asset directory may be deeper).
 */
export function egressSocketPath(clusterDir: string): string {
  const key = createHash('sha256').update(resolve(clusterDir)).digest('hex').slice(0, 20);
  return join(tmpdir(), `loko-twin-egress-${process.getuid?.() ?? 'user'}`, `${key}.sock`);
}

/** The apiserver's `--egress-selector-config-file` for `socket`. */
export function egressSelectorConfig(socket: string): string {
  return [
    'apiVersion: apiserver.k8s.io/v1beta1',
    'kind: EgressSelectorConfiguration',
    'egressSelections:',
    '  - name: cluster',
    '    connection:',
    '      proxyProtocol: HTTPConnect',
    '      transport:',
    '        uds:',
    `          udsName: ${JSON.stringify(socket)}`,
    '',
  ].join('\n');
}

const MAX_HEAD = 8192;

/** The proxy on one cluster's egress socket. */
export class EgressProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly path: string,
  ) {}

  /**
   * Listens on `path` (a stale socket file is replaced; the directory is made 0700). Each CONNECT
   * goes to `handler` first, then to loopback targets; everything else is refused.
   */
  static async listen(path: string, handler: EgressHandler): Promise<EgressProxy> {
    const dir = join(path, '..');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The directory sits in a shared $TMPDIR: one made by another user (or a symlink) could
    // hand the apiserver's webhook traffic to someone else.
    const st = lstatSync(dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
      throw new Error(
        `${dir} is not a private directory of this user (a directory, owned by uid ${uid ?? '?'}, mode 0700); remove it and start again`,
      );
    }
    rmSync(path, { force: true });
    const server = createServer();
    const proxy = new EgressProxy(server, path);
    server.on('connection', (socket: Socket) => proxy.accept(socket, handler));
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(path, () => ok());
    });
    return proxy;
  }

  private accept(socket: Socket, handler: EgressHandler): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      const rest = head.subarray(end + 4);
      const m = /^CONNECT ([^\s]+) HTTP\/1\.[01]\r\n/.exec(
        head.subarray(0, end + 2).toString('latin1'),
      );
      const target = m ? parseTarget(m[1]!) : undefined;
      if (!target) {
        socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
        return;
      }
      if (rest.length > 0) socket.unshift(rest);
      const take = handler(target.host, target.port);
      if (take) {
        socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
        take(socket);
        socket.resume();
        return;
      }
      if (isLoopbackV4(target.host)) {
        const upstream = connect(target.port, target.host);
        upstream.once('connect', () => {
          socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
          upstream.pipe(socket);
          socket.pipe(upstream);
          socket.resume();
        });
        upstream.once('error', (err: NodeJS.ErrnoException) => {
          if (socket.writable && !upstream.remoteAddress) {
            socket.end(
              `HTTP/1.1 502 ${err.code === 'ECONNREFUSED' ? 'connection refused' : 'bad gateway'}\r\n\r\n`,
            );
          } else socket.destroy();
        });
        socket.once('close', () => upstream.destroy());
        return;
      }
      socket.end('HTTP/1.1 502 connection refused\r\n\r\n');
    };
    socket.on('data', onData);
  }

  /** Stops listening, drops every connection and removes the socket file. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((ok) => this.server.close(() => ok()));
    rmSync(this.path, { force: true });
  }
}

function parseTarget(s: string): { host: string; port: number } | undefined {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1]!, port } : undefined;
}
