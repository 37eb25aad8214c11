/**
 * Address math and allocation. Network-safety rule: every IPv4 address the emulator hands out is
 * in 127.0.0.0/8, so anything that dials a device address stays on the local machine. Each
 * instance draws its own 127.X.0.0/16 (X random in 2..255, persisted), split as:
 *
 *   127.X.0.0/17    public management /31s (one per device)
 *   127.X.128.0/18  private management /25s (one or more per metro), /31 per device
 *   127.X.192.0/18  Elastic IP reservations (public_ipv4, global_ipv4)
 *
 * IPv6 uses the documentation prefix 2001:db8::/32: a /56 per metro
 * (2001:db8:<Y>:<slot>00::/56, Y random per instance) and a /127 per device.
 */
import { createServer, type Server } from 'node:net';

/** The per-instance address choice, stored in the state file. */
export interface AddressBlock {
  /** X in 127.X.0.0/16; never 0 or 1, so 127.0.0.1 is never handed out. */
  v4Octet: number;
  /** Y in 2001:db8:Y::/48 (1..0xffff). */
  v6Hextet: number;
}

/** A contiguous IPv4 range as integers. */
export interface V4Range {
  start: number;
  size: number;
}

// Blocks taken by emulators running in this process. Across processes a block is held by a
// sentinel listener (see `leaseAddressBlock`), which also covers this process; the set spares a
// bind attempt for blocks known to be taken here.
const claimed = new Set<number>();

/**
 * Port of the sentinel listener on `127.X.255.254` that marks 127.X.0.0/16 as in use by a running
 * emulator, machine-wide: a second bind fails with EADDRINUSE while the holder lives, and the
 * kernel frees it when the holder exits, even after SIGKILL. Nothing ever connects to it.
 */
export const BLOCK_SENTINEL_PORT = 47999;

/** The address of a block's sentinel listener. */
export function sentinelAddress(block: AddressBlock): string {
  return `127.${block.v4Octet}.255.254`;
}

/** A block held for the lifetime of an emulator instance. */
export interface AddressLease {
  block: AddressBlock;
  /** Closes the sentinel listener; idempotent. */
  release(): Promise<void>;
}

/** Thrown when a saved state's block is held by another running emulator. */
export class AddressBlockInUseError extends Error {
  constructor(
    readonly block: AddressBlock,
    readonly statePath: string | undefined,
  ) {
    super(
      `the address block 127.${block.v4Octet}.0.0/16 ${
        statePath ? `of state file ${statePath} ` : ''
      }is in use by another running emulator (it holds ${sentinelAddress(block)}:${BLOCK_SENTINEL_PORT}); stop that emulator${
        statePath ? ', or use another state file' : ''
      }`,
    );
    this.name = 'AddressBlockInUseError';
  }
}

/**
 * Holds a block machine-wide for a running instance. With `redraw` (a fresh state), a block some
 * other instance holds is skipped and another one drawn; without it (a saved state, whose devices
 * already have addresses in the block) that throws {@link AddressBlockInUseError}. Where the
 * sentinel address cannot be bound at all (only 127.0.0.1 configured, as on macOS), the block is
 * held in this process only.
 */
export async function leaseAddressBlock(
  block: AddressBlock,
  opts: {
    redraw: boolean;
    statePath?: string;
    random?: () => number;
    port?: number;
  },
): Promise<AddressLease> {
  const port = opts.port ?? BLOCK_SENTINEL_PORT;
  const tried = new Set<number>();
  let candidate = block;
  for (;;) {
    const held = claimed.has(candidate.v4Octet) ? 'in-use' : await bindSentinel(candidate, port);
    if (held !== 'in-use') {
      const leased = candidate;
      claimed.add(leased.v4Octet);
      let released: Promise<void> | undefined;
      return {
        block: leased,
        release: () =>
          (released ??= (async () => {
            claimed.delete(leased.v4Octet);
            if (held !== 'unavailable') await new Promise<void>((r) => held.close(() => r()));
          })()),
      };
    }
    if (!opts.redraw) throw new AddressBlockInUseError(candidate, opts.statePath);
    tried.add(candidate.v4Octet);
    if (range(2, 255).every((x) => tried.has(x) || claimed.has(x))) {
      throw new Error(
        `every loopback block 127.2-255.0.0/16 is in use by another emulator (port ${port} is bound on each 127.X.255.254)`,
      );
    }
    candidate = { ...drawAddressBlock(opts.random, tried), v6Hextet: block.v6Hextet };
  }
}

async function bindSentinel(
  block: AddressBlock,
  port: number,
): Promise<Server | 'in-use' | 'unavailable'> {
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'EADDRINUSE' ? 'in-use' : 'unavailable');
    });
    server.listen({ host: sentinelAddress(block), port, exclusive: true }, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** Draws a fresh block, avoiding `avoid` and blocks claimed in this process. */
export function drawAddressBlock(
  random: () => number = Math.random,
  avoid: ReadonlySet<number> = new Set(),
): AddressBlock {
  const free: number[] = [];
  for (let x = 2; x <= 255; x++) if (!avoid.has(x) && !claimed.has(x)) free.push(x);
  const pool = free.length > 0 ? free : range(2, 255);
  const v4Octet = pool[Math.floor(random() * pool.length) % pool.length]!;
  const v6Hextet = 1 + (Math.floor(random() * 0xffff) % 0xffff);
  return { v4Octet, v6Hextet };
}

/** Marks a block as in use by a running instance of this process. */
export function claimAddressBlock(block: AddressBlock): void {
  claimed.add(block.v4Octet);
}

/** Releases a block claimed with `claimAddressBlock`. */
export function releaseAddressBlock(block: AddressBlock): void {
  claimed.delete(block.v4Octet);
}

/** The three IPv4 ranges of an instance (see the module comment). */
export function rangesOf(block: AddressBlock): {
  all: V4Range;
  publicManagement: V4Range;
  privateManagement: V4Range;
  elastic: V4Range;
} {
  const base = ipv4ToInt(`127.${block.v4Octet}.0.0`);
  return {
    all: { start: base, size: 1 << 16 },
    publicManagement: { start: base, size: 1 << 15 },
    privateManagement: { start: base + (1 << 15), size: 1 << 14 },
    elastic: { start: base + (1 << 15) + (1 << 14), size: 1 << 14 },
  };
}

/** Dotted quad -> unsigned 32-bit integer; throws on malformed input. */
export function ipv4ToInt(s: string): number {
  const n = parseIpv4(s);
  if (n === undefined) throw new Error(`invalid IPv4 address: ${s}`);
  return n;
}

/** Dotted quad -> integer, or undefined when malformed. */
export function parseIpv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

/** Unsigned 32-bit integer -> dotted quad. */
export function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** IPv4 netmask of a prefix length, e.g. 31 -> 255.255.255.254. */
export function v4Netmask(cidr: number): string {
  return intToIpv4(cidr === 0 ? 0 : (0xffffffff << (32 - cidr)) >>> 0);
}

/** Number of addresses in an IPv4 prefix. */
export function v4Size(cidr: number): number {
  return 2 ** (32 - cidr);
}

/** True for an address in 127.0.0.0/8. */
export function isLoopbackV4(address: string): boolean {
  const n = parseIpv4(address);
  return n !== undefined && n >>> 24 === 127;
}

/**
 * Parses `a.b.c.d/n` (or a bare address, meaning /32). Returns undefined when malformed or when
 * the address is not the start of its block (the API wants block-aligned CIDRs).
 */
export function parseV4Cidr(s: string): { network: number; cidr: number } | undefined {
  const [addr, len, ...rest] = s.trim().split('/');
  if (rest.length > 0 || addr === undefined) return undefined;
  const network = parseIpv4(addr);
  const cidr = len === undefined ? 32 : /^\d{1,2}$/.test(len) ? Number(len) : NaN;
  if (network === undefined || !(cidr >= 0 && cidr <= 32)) return undefined;
  if (network % v4Size(cidr) !== 0) return undefined;
  return { network, cidr };
}

/** True when range `inner` lies inside `outer`. */
export function contains(outer: V4Range, inner: V4Range): boolean {
  return inner.start >= outer.start && inner.start + inner.size <= outer.start + outer.size;
}

/** True when two ranges share an address. */
export function overlaps(a: V4Range, b: V4Range): boolean {
  return a.start < b.start + b.size && b.start < a.start + a.size;
}

/**
 * First block of `size` addresses (a power of two), aligned to its size, inside `within` and not
 * overlapping any of `used`. Undefined when the range is full.
 */
export function firstFreeAligned(
  within: V4Range,
  size: number,
  used: readonly V4Range[],
): number | undefined {
  const sorted = [...used].filter((u) => overlaps(u, within)).sort((a, b) => a.start - b.start);
  let candidate = alignUp(within.start, size);
  for (const u of sorted) {
    if (candidate + size <= u.start) break;
    if (overlaps({ start: candidate, size }, u)) candidate = alignUp(u.start + u.size, size);
  }
  return candidate + size <= within.start + within.size ? candidate : undefined;
}

function alignUp(n: number, size: number): number {
  return Math.ceil(n / size) * size;
}

/** IPv6 prefix (first four hextets) of a metro's /56; slot is 1-based (0 would print oddly). */
export function v6MetroPrefix(block: AddressBlock, slot: number): string {
  return `2001:db8:${block.v6Hextet.toString(16)}:${(slot << 8).toString(16)}`;
}

/** Network address of a metro's /56, e.g. `2001:db8:1a2b:100::`. */
export function v6MetroNetwork(block: AddressBlock, slot: number): string {
  return `${v6MetroPrefix(block, slot)}::`;
}

/** The /127 pair `n` (1-based) inside a metro's /56: gateway = even, address = odd. */
export function v6Pair(
  block: AddressBlock,
  slot: number,
  n: number,
): { network: string; gateway: string; address: string } {
  const prefix = v6MetroPrefix(block, slot);
  const gateway = `${prefix}::${(2 * n).toString(16)}`;
  return { network: gateway, gateway, address: `${prefix}::${(2 * n + 1).toString(16)}` };
}

/** IPv6 netmask of a prefix length (only the lengths the emulator uses: 56 and 127). */
export function v6Netmask(cidr: number): string {
  if (cidr === 56) return 'ffff:ffff:ffff:ff00::';
  if (cidr === 127) return 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe';
  if (cidr === 64) return 'ffff:ffff:ffff:ffff::';
  throw new Error(`unsupported IPv6 prefix length /${cidr}`);
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}
