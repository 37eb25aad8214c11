/**
 * CIDR parsing for MetalLB address pools: IPv4 and IPv6 prefixes as big integers, so alignment
 * and overlap checks are exact. MetalLB's webhook refuses overlapping pools; loko reports them
 * with file:line before anything reaches the cluster.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** A parsed prefix: family, the network as an integer, and the prefix length. */
export interface Cidr {
  family: 4 | 6;
  /** The address as written, as an integer (may have host bits set). */
  address: bigint;
  prefix: number;
  /** First and last address of the prefix. */
  first: bigint;
  last: bigint;
}

function v4ToBig(s: string): bigint {
  return s.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6ToBig(s: string): bigint {
  let text = s;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = v4ToBig(v4[1]!);
    text = `${text.slice(0, v4.index)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** Parses `a.b.c.d/n` or `x:y::z/n`; undefined when it is not a CIDR. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addr = text.slice(0, slash);
  const len = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(len)) return undefined;
  const prefix = Number(len);
  let family: 4 | 6;
  let address: bigint;
  if (isIPv4(addr)) {
    family = 4;
    address = v4ToBig(addr);
  } else if (isIPv6(addr) && !addr.includes('%')) {
    family = 6;
    address = v6ToBig(addr);
  } else {
    return undefined;
  }
  const bits = family === 4 ? 32 : 128;
  if (prefix > bits) return undefined;
  const hostBits = BigInt(bits - prefix);
  const first = (address >> hostBits) << hostBits;
  const last = first + (1n << hostBits) - 1n;
  return { family, address, prefix, first, last };
}

/** The prefix written with host bits cleared, e.g. `192.0.2.0/24` for `192.0.2.7/24`. */
export function networkOf(c: Cidr): string {
  if (c.family === 4) {
    const parts = [24n, 16n, 8n, 0n].map((s) => ((c.first >> s) & 0xffn).toString());
    return `${parts.join('.')}/${c.prefix}`;
  }
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((c.first >> s) & 0xffffn).toString(16));
  // Compress the longest run (>= 2) of zero groups (RFC 5952) for a readable hint.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
  }
  const text =
    best < 0
      ? groups.join(':')
      : `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
  return `${text}/${c.prefix}`;
}

/** True when two prefixes of the same family share an address. */
export function overlaps(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.first <= b.last && b.first <= a.last;
}
