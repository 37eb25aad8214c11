/**
 * The twin's egress proxy on a Unix socket: a CONNECT to a served address is handed to its
 * handler in-process, a loopback target is connected, anything else is refused with "502
 * connection refused" and never dialled, and garbage is a 400.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EgressProxy,
  egressSelectorConfig,
  egressSocketPath,
} from '../../../../src/emulator/twin/egress.js';

function exchange(path: string, request: string, after?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let text = '';
    s.on('error', reject);
    s.on('connect', () => s.write(request));
    s.on('data', (b: Buffer) => {
      text += b.toString('latin1');
      if (after !== undefined && text.includes('\r\n\r\n') && text.startsWith('HTTP/1.1 200')) {
        s.write(after);
        after = undefined;
      }
    });
    s.on('close', () => resolve(text));
    setTimeout(() => s.end(), 300);
  });
}

describe('EgressProxy', () => {
  const dirs: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function proxy(handler: Parameters<typeof EgressProxy.listen>[1]) {
    const dir = mkdtempSync(join(tmpdir(), 'loko-egress-test-'));
    dirs.push(dir);
    const p = await EgressProxy.listen(join(dir, 'e.sock'), handler);
    closers.push(() => p.close());
    return p;
  }

  it('refuses a socket directory other users may write to (shared $TMPDIR)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loko-egress-test-'));
    dirs.push(dir);
    chmodSync(dir, 0o777);
    await expect(EgressProxy.listen(join(dir, 'e.sock'), () => undefined)).rejects.toThrow(
      /not a private directory/,
    );
  });

  it('hands a served address to its handler, bytes after the CONNECT included', async () => {
    const seen: string[] = [];
    const p = await proxy((host, port) =>
      host === '10.2.1.1' && port === 9443
        ? (socket: Socket) => {
            socket.on('data', (b: Buffer) => {
              seen.push(b.toString());
              socket.end('pong');
            });
          }
        : undefined,
    );
    const answer = await exchange(
      p.path,
      'CONNECT 10.2.1.1:9443 HTTP/1.1\r\nHost: x\r\n\r\n',
      'ping',
    );
    expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\npong');
    expect(seen).toEqual(['ping']);
  });

  it('connects loopback targets, and refuses the rest without dialling', async () => {
    const echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise((r) => echo.close(() => r())));
    const port = (echo.address() as AddressInfo).port;
    const p = await proxy(() => undefined);
    expect(await exchange(p.path, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`, 'hi')).toBe(
      'HTTP/1.1 200 Connection established\r\n\r\nhi',
    );
    expect(await exchange(p.path, 'CONNECT 10.2.200.200:443 HTTP/1.1\r\n\r\n')).toBe(
      'HTTP/1.1 502 connection refused\r\n\r\n',
    );
    expect(await exchange(p.path, 'CONNECT [fd00::1]:443 HTTP/1.1\r\n\r\n')).toBe(
      'HTTP/1.1 502 connection refused\r\n\r\n',
    );
    expect(await exchange(p.path, 'GET / HTTP/1.1\r\n\r\n')).toBe(
      'HTTP/1.1 400 Bad Request\r\n\r\n',
    );
  });

  it('the socket path is short and per cluster directory; the config names it', () => {
    const a = egressSocketPath('/a/very/deep/asset/dir/'.repeat(8) + 'emulator/twin/127.9.192.0');
    expect(a.length).toBeLessThan(100);
    expect(egressSocketPath('/x/127.9.192.0')).not.toBe(egressSocketPath('/y/127.9.192.0'));
    expect(egressSelectorConfig('/tmp/s.sock')).toContain('udsName: "/tmp/s.sock"');
    expect(egressSelectorConfig('/tmp/s.sock')).toContain('proxyProtocol: HTTPConnect');
  });
});
