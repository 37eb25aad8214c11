/**
 * The socket-table parser and the loopback rule of the network-safety check
 * (test/harness/kube/sockets.ts), including the negative cases that must fail.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeAddress,
  findViolations,
  formatSocket,
  isLoopback,
  parseProcNet,
  processSockets,
  SocketSampler,
  type SocketEntry,
} from '../../harness/kube/sockets.js';

const HEADER =
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const row = (sl: number, local: string, remote: string, st: string, inode: number) =>
  `  ${sl}: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 20 4 30 10 -1\n`;

describe('procfs socket tables', () => {
  it('decodes IPv4 and IPv6 addresses (host-endian 32-bit words)', () => {
    expect(decodeAddress('0100007F')).toBe('127.0.0.1');
    expect(decodeAddress('0100600A')).toBe('10.96.0.1');
    expect(decodeAddress('00000000')).toBe('0.0.0.0');
    expect(decodeAddress('00000000000000000000000001000000')).toBe('::1');
    expect(decodeAddress('00000000000000000000000000000000')).toBe('::');
    expect(decodeAddress('0000000000000000FFFF00000100007F')).toBe('::ffff:127.0.0.1');
    expect(decodeAddress('0000000000000000FFFF00000A00A8C0')).toBe('::ffff:192.168.0.10');
    expect(decodeAddress('B80D0120000000000000000001000000')).toBe('2001:db8::1');
  });

  it('parses rows with state, ports and inode', () => {
    const text =
      HEADER +
      row(0, '0100007F:1F90', '00000000:0000', '0A', 1001) +
      row(1, '0100007F:D431', '0100007F:0951', '01', 1002) +
      row(2, '0100007F:A001', '0100600A:01BB', '02', 1003);
    expect(parseProcNet(text, 'tcp')).toEqual([
      {
        proto: 'tcp',
        localIp: '127.0.0.1',
        localPort: 8080,
        remoteIp: '0.0.0.0',
        remotePort: 0,
        state: 'LISTEN',
        inode: 1001,
      },
      {
        proto: 'tcp',
        localIp: '127.0.0.1',
        localPort: 54321,
        remoteIp: '127.0.0.1',
        remotePort: 2385,
        state: 'ESTABLISHED',
        inode: 1002,
      },
      {
        proto: 'tcp',
        localIp: '127.0.0.1',
        localPort: 40961,
        remoteIp: '10.96.0.1',
        remotePort: 443,
        state: 'SYN_SENT',
        inode: 1003,
      },
    ]);
    const udp = parseProcNet(
      HEADER +
        row(0, '0100007F:8AE2', '08080808:0035', '01', 7) +
        row(1, '0100007F:0035', '00000000:0000', '07', 8),
      'udp',
    );
    expect(udp.map((s) => [s.state, s.remoteIp, s.remotePort])).toEqual([
      ['ESTABLISHED', '8.8.8.8', 53],
      ['UNCONN', '0.0.0.0', 0],
    ]);
  });

  it('knows loopback', () => {
    for (const ip of ['127.0.0.1', '127.96.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1']) {
      expect(isLoopback(ip), ip).toBe(true);
    }
    for (const ip of ['10.0.0.1', '0.0.0.0', '::', '::ffff:10.0.0.1', '2001:db8::1', '128.0.0.1']) {
      expect(isLoopback(ip), ip).toBe(false);
    }
  });
});

describe('loopback-only rule', () => {
  it('passes loopback listeners and loopback peers', () => {
    const text =
      HEADER +
      row(0, '0100007F:1F90', '00000000:0000', '0A', 1) +
      row(1, '0100007F:D431', '0100007F:0951', '01', 2) +
      row(2, '0100007F:D432', '0100007F:0951', '06', 3);
    expect(findViolations('kube-apiserver', 42, parseProcNet(text, 'tcp'))).toEqual([]);
    const v6 =
      HEADER +
      row(
        0,
        '00000000000000000000000001000000:1F90',
        '00000000000000000000000000000000:0000',
        '0A',
        4,
      ) +
      row(
        1,
        '0000000000000000FFFF00000100007F:D431',
        '0000000000000000FFFF00000100007F:0951',
        '01',
        5,
      );
    expect(findViolations('etcd', 43, parseProcNet(v6, 'tcp6'))).toEqual([]);
  });

  // The negative checks: the rule must be able to fail.
  it('flags a dial to a cluster IP, a private or public address, in any state but LISTEN', () => {
    const text =
      HEADER +
      row(0, '0100007F:A001', '0100600A:01BB', '02', 1) + // SYN_SENT to 10.96.0.1:443
      row(1, '0A00000A:A002', '0A00A8C0:2710', '01', 2) + // ESTABLISHED to 192.168.0.10:10000
      row(2, '0A00000A:A003', '08080808:01BB', '08', 3); // CLOSE_WAIT from 8.8.8.8:443
    const v = findViolations('kube-apiserver', 42, parseProcNet(text, 'tcp'));
    expect(v.map((x) => [x.rule, x.text])).toEqual([
      ['remote-not-loopback', 'tcp 127.0.0.1:40961 -> 10.96.0.1:443 SYN_SENT'],
      ['remote-not-loopback', 'tcp 10.0.0.10:40962 -> 192.168.0.10:10000 ESTABLISHED'],
      ['remote-not-loopback', 'tcp 10.0.0.10:40963 -> 8.8.8.8:443 CLOSE_WAIT'],
    ]);
    expect(v.every((x) => x.process === 'kube-apiserver' && x.pid === 42)).toBe(true);
  });

  it('flags an IPv6 or IPv4-mapped peer off the machine, and a connected UDP socket (DNS)', () => {
    const v6 =
      HEADER +
      row(
        0,
        '00000000000000000000000001000000:A001',
        'B80D0120000000000000000001000000:01BB',
        '01',
        1,
      );
    expect(findViolations('kwok', 1, parseProcNet(v6, 'tcp6')).map((x) => x.text)).toEqual([
      'tcp6 [::1]:40961 -> [2001:db8::1]:443 ESTABLISHED',
    ]);
    const mapped =
      HEADER +
      row(
        0,
        '0000000000000000FFFF00000100007F:A001',
        '0000000000000000FFFF00000A00A8C0:01BB',
        '02',
        1,
      );
    expect(findViolations('etcd', 1, parseProcNet(mapped, 'tcp6'))).toHaveLength(1);
    const dns = HEADER + row(0, '0100007F:8AE2', '08080808:0035', '01', 7);
    expect(findViolations('kube-controller-manager', 1, parseProcNet(dns, 'udp'))).toEqual([
      expect.objectContaining({
        rule: 'remote-not-loopback',
        text: 'udp 127.0.0.1:35554 -> 8.8.8.8:53 ESTABLISHED',
      }),
    ]);
  });

  it('flags a listener on all interfaces or a non-loopback address', () => {
    const text =
      HEADER +
      row(0, '00000000:1A0B', '00000000:0000', '0A', 1) +
      row(1, '0A00000A:1A0C', '00000000:0000', '0A', 2);
    expect(
      findViolations('kube-scheduler', 7, parseProcNet(text, 'tcp')).map((v) => v.rule),
    ).toEqual(['listen-not-loopback', 'listen-not-loopback']);
    const udpAny = HEADER + row(0, '00000000:0035', '00000000:0000', '07', 3);
    expect(findViolations('etcd', 7, parseProcNet(udpAny, 'udp'))).toHaveLength(1);
  });

  it('formats IPv6 endpoints in brackets', () => {
    const [s] = parseProcNet(
      HEADER +
        row(
          0,
          '00000000000000000000000001000000:0050',
          '00000000000000000000000000000000:0000',
          '0A',
          1,
        ),
      'tcp6',
    );
    expect(formatSocket(s!)).toBe('tcp6 [::1]:80 -> [::]:0 LISTEN');
  });
});

describe('live /proc lookup', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  it("finds this process's own loopback listener by inode", async () => {
    server = createServer();
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const mine = processSockets(process.pid).filter((s) => s.localPort === port);
    expect(mine).toEqual([expect.objectContaining({ state: 'LISTEN', localIp: '127.0.0.1' })]);
    expect(findViolations('self', process.pid, mine)).toEqual([]);
  });

  it('returns nothing for a process that does not exist', () => {
    expect(processSockets(2 ** 22 + 12345)).toEqual([]);
  });
});

describe('SocketSampler (what fails the run at teardown)', () => {
  const sock = (remoteIp: string, remotePort: number): SocketEntry => ({
    proto: 'tcp',
    localIp: '127.0.0.1',
    localPort: 40000,
    remoteIp,
    remotePort,
    state: 'SYN_SENT',
    inode: 1,
  });

  it('reports all clear when every sample is loopback', () => {
    const s = new SocketSampler([{ name: 'etcd', pid: 1 }], () => ({ sockets: 3, violations: [] }));
    s.sample();
    s.sample();
    expect(s.report()).toEqual({
      ok: true,
      lines: ['network safety: 2 socket samples, every address loopback'],
    });
  });

  it('remembers each distinct violation once, even after the socket is gone', () => {
    let round = 0;
    const s = new SocketSampler([{ name: 'kube-apiserver', pid: 42 }], () => {
      round++;
      const sockets = round === 2 ? [sock('10.96.0.1', 443)] : [sock('127.0.0.1', 2379)];
      return { sockets: 1, violations: findViolations('kube-apiserver', 42, sockets) };
    });
    expect(s.sample()).toEqual([]);
    expect(s.sample().map((v) => v.text)).toEqual([
      'tcp 127.0.0.1:40000 -> 10.96.0.1:443 SYN_SENT',
    ]);
    expect(s.sample()).toEqual([]);
    expect(s.report()).toEqual({
      ok: false,
      lines: [
        'NETWORK SAFETY: harness processes had sockets outside 127.0.0.0/8:',
        '  kube-apiserver (pid 42, remote-not-loopback): tcp 127.0.0.1:40000 -> 10.96.0.1:443 SYN_SENT',
      ],
    });
  });
});
