/**
 * Loopback-only networking helpers: free ports on an address, health probes, and the mapping of a
 * cluster's service and pod ranges into 127.0.0.0/8 (so that no cluster IP the twin's apiserver
 * could ever dial is routed off the machine).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo, type Server } from 'node:net';

/** True for an IPv4 address in 127.0.0.0/8. */
export function isLoopbackV4(address: string): boolean {
  const parts = address.split('.');
  return (
    parts.length === 4 &&
    parts[0] === '127' &&
    parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)
  );
}

/** `n` free TCP ports on `address` (held open together, so they differ). */
export async function freePorts(address: string, n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, address, () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** True when nothing listens on `address:port` and it can be bound. */
export function portFree(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, address, () => s.close(() => resolve(true)));
  });
}

/** GET `url` once: status and body, or the error text. TLS verified against `caPem` when given. */
export function probe(
  url: string,
  caPem?: string,
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const https = url.startsWith('https:');
    const opts = { timeout: 3000, ...(https && caPem ? { ca: caPem } : {}) };
    const req = (https ? httpsRequest : httpRequest)(url, opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

/**
 * A cluster's IPv4 range moved into 127.0.0.0/8: the first octet becomes 127, the rest and the
 * prefix length stay (`10.3.0.0/16` → `127.3.0.0/16`, `10.96.0.0/12` → `127.96.0.0/12`). A prefix
 * shorter than /8 is narrowed to /8.
 */
export function loopbackRange(cidr: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr.trim());
  if (!m) throw new Error(`"${cidr}" is not an IPv4 CIDR`);
  const bits = Math.max(8, Math.min(32, Number(m[5])));
  const n = ((127 << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const mask = bits === 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
  return `${intToIpv4((n & mask) >>> 0)}/${bits}`;
}

/** The first host address of a range (the `kubernetes` Service's cluster IP). */
export function firstHost(cidr: string): string {
  const [ip] = cidr.split('/') as [string];
  const n = ip.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
  return intToIpv4(n + 1);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}
