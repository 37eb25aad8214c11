/**
 * Network-safety check of the test control plane: which sockets do its processes hold, and does
 * any of them point off the machine?
 *
 * Sockets are read from procfs without privileges: `/proc/<pid>/fd/*` links to `socket:[inode]`,
 * and `/proc/<pid>/net/{tcp,tcp6,udp,udp6}` lists the sockets of the process's network namespace
 * with their inode. The rule (docs/testing.md):
 *  - a socket with a peer (TCP in any state but LISTEN, a connected UDP socket) must have its
 *    remote address in 127.0.0.0/8 or ::1 (an IPv4-mapped `::ffff:127.x.y.z` counts as loopback);
 *  - a listening TCP socket, and a bound UDP socket, must be bound to a loopback address.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Protocol tables read from `/proc/<pid>/net/`. */
export const PROTOCOLS = ['tcp', 'tcp6', 'udp', 'udp6'] as const;
/** One of `PROTOCOLS`. */
export type Protocol = (typeof PROTOCOLS)[number];

/** TCP states as the kernel numbers them (include/net/tcp_states.h). */
export const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
  '0C': 'NEW_SYN_RECV',
};

/** One row of a `/proc/net/*` table. */
export interface SocketEntry {
  proto: Protocol;
  localIp: string;
  localPort: number;
  remoteIp: string;
  remotePort: number;
  /** TCP state name; for UDP `UNCONN` (no peer) or `ESTABLISHED` (connected). */
  state: string;
  inode: number;
}

/** A socket of a harness process that breaks the rule. */
export interface Violation {
  process: string;
  pid: number;
  rule: 'remote-not-loopback' | 'listen-not-loopback';
  socket: SocketEntry;
  /** `tcp 127.0.0.1:4321 -> 10.96.0.1:443 SYN_SENT` */
  text: string;
}

/** Decodes a procfs address: 8 hex digits (IPv4) or 32 (IPv6), each 32-bit word host-endian. */
export function decodeAddress(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) =>
    // Words are printed as host-order integers; on the little-endian machines we run on, the
    // first byte in memory is the last pair of hex digits.
    [6, 4, 2, 0].map((i) => parseInt(w.slice(i, i + 2), 16)),
  );
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.length !== 16) throw new Error(`not a procfs address: ${hex}`);
  // IPv4-mapped: ::ffff:a.b.c.d
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952: compress the longest run (at least two) of zero groups with "::".
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hexes = groups.map((g) => g.toString(16));
  if (best.len < 2) return hexes.join(':');
  return `${hexes.slice(0, best.at).join(':')}::${hexes.slice(best.at + best.len).join(':')}`;
}

/** Parses the text of `/proc/<pid>/net/<proto>`. */
export function parseProcNet(text: string, proto: Protocol): SocketEntry[] {
  const rows: SocketEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [local, remote, st] = [f[1]!, f[2]!, f[3]!];
    const [lip, lport] = local.split(':') as [string, string];
    const [rip, rport] = remote.split(':') as [string, string];
    const remotePort = parseInt(rport, 16);
    const state = proto.startsWith('tcp')
      ? (TCP_STATES[st.toUpperCase()] ?? `0x${st}`)
      : remotePort === 0
        ? 'UNCONN'
        : 'ESTABLISHED';
    rows.push({
      proto,
      localIp: decodeAddress(lip),
      localPort: parseInt(lport, 16),
      remoteIp: decodeAddress(rip),
      remotePort,
      state,
      inode: Number(f[9]),
    });
  }
  return rows;
}

/** True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
export function isLoopback(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return /^127\.\d+\.\d+\.\d+$/.test(v4) || ip === '::1';
}

/** True for 0.0.0.0 and :: (no peer / any address). */
export function isUnspecified(ip: string): boolean {
  return ip === '0.0.0.0' || ip === '::' || ip === '::ffff:0.0.0.0';
}

/** `tcp 127.0.0.1:4321 -> 10.96.0.1:443 SYN_SENT` */
export function formatSocket(s: SocketEntry): string {
  const host = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);
  return `${s.proto} ${host(s.localIp)}:${s.localPort} -> ${host(s.remoteIp)}:${s.remotePort} ${s.state}`;
}

/** The rule violations among `sockets` of process `name` (`pid`). */
export function findViolations(name: string, pid: number, sockets: SocketEntry[]): Violation[] {
  const out: Violation[] = [];
  for (const s of sockets) {
    const listening = s.state === 'LISTEN' || s.state === 'UNCONN';
    let rule: Violation['rule'] | undefined;
    if (listening) {
      if (!isLoopback(s.localIp)) rule = 'listen-not-loopback';
    } else if (!isUnspecified(s.remoteIp) && !isLoopback(s.remoteIp)) {
      rule = 'remote-not-loopback';
    }
    if (rule) out.push({ process: name, pid, rule, socket: s, text: formatSocket(s) });
  }
  return out;
}

/** Inodes of the sockets process `pid` holds open (empty when the process is gone). */
export function socketInodes(pid: number): Set<number> {
  const inodes = new Set<number>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(Number(m[1]));
    } catch {
      /* closed meanwhile */
    }
  }
  return inodes;
}

function readTables(pid: number): SocketEntry[] {
  const out: SocketEntry[] = [];
  for (const proto of PROTOCOLS) {
    try {
      out.push(...parseProcNet(readFileSync(`/proc/${pid}/net/${proto}`, 'utf8'), proto));
    } catch {
      /* process gone, or no such table (IPv6 disabled) */
    }
  }
  return out;
}

function netns(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return `pid:${pid}`;
  }
}

/** The TCP/UDP sockets process `pid` holds open right now. */
export function processSockets(pid: number): SocketEntry[] {
  const inodes = socketInodes(pid);
  return inodes.size === 0 ? [] : readTables(pid).filter((s) => inodes.has(s.inode));
}

/**
 * One look at the sockets of `processes`: how many were seen and which break the rule. The
 * socket tables are read once per network namespace.
 */
export function inspectProcesses(processes: { name: string; pid: number }[]): {
  sockets: number;
  violations: Violation[];
} {
  const tables = new Map<string, SocketEntry[]>();
  let sockets = 0;
  const violations: Violation[] = [];
  for (const p of processes) {
    const inodes = socketInodes(p.pid);
    if (inodes.size === 0) continue;
    const ns = netns(p.pid);
    if (!tables.has(ns)) tables.set(ns, readTables(p.pid));
    const mine = tables.get(ns)!.filter((s) => inodes.has(s.inode));
    sockets += mine.length;
    violations.push(...findViolations(p.name, p.pid, mine));
  }
  return { sockets, violations };
}

/**
 * Repeated looks at the sockets of a set of processes, remembering every distinct violation (the
 * globalSetup samples every 250 ms for the whole run). `inspect` is injectable for tests.
 */
export class SocketSampler {
  samples = 0;
  /** Most sockets seen in one sample. */
  maxSockets = 0;
  private readonly seen = new Map<string, Violation>();

  constructor(
    private readonly processes: { name: string; pid: number }[],
    private readonly inspect: typeof inspectProcesses = inspectProcesses,
  ) {}

  /** Takes one sample; returns the violations not seen before. */
  sample(): Violation[] {
    const r = this.inspect(this.processes);
    this.samples++;
    this.maxSockets = Math.max(this.maxSockets, r.sockets);
    const fresh: Violation[] = [];
    for (const v of r.violations) {
      const s = v.socket;
      const key = `${v.process}|${v.rule}|${s.proto}|${s.localIp}:${s.localPort}|${s.remoteIp}:${s.remotePort}`;
      if (!this.seen.has(key)) {
        this.seen.set(key, v);
        fresh.push(v);
      }
    }
    return fresh;
  }

  /** Every distinct violation so far. */
  get violations(): Violation[] {
    return [...this.seen.values()];
  }

  /** Lines for the end of the run: all clear, or one line per violation. */
  report(): { ok: boolean; lines: string[] } {
    if (this.seen.size === 0) {
      return {
        ok: true,
        lines: [`network safety: ${this.samples} socket samples, every address loopback`],
      };
    }
    return {
      ok: false,
      lines: [
        'NETWORK SAFETY: harness processes had sockets outside 127.0.0.0/8:',
        ...this.violations.map((v) => `  ${v.process} (pid ${v.pid}, ${v.rule}): ${v.text}`),
      ],
    };
  }
}
