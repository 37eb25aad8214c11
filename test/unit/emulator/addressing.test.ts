import { describe, expect, it } from 'vitest';
import {
  claimAddressBlock,
  drawAddressBlock,
  firstFreeAligned,
  intToIpv4,
  ipv4ToInt,
  isLoopbackV4,
  parseV4Cidr,
  rangesOf,
  releaseAddressBlock,
  v4Netmask,
  v6Pair,
} from '../../../src/emulator/addressing.js';
import { assignManagementAddresses, reserveElastic } from '../../../src/emulator/ipam.js';
import { defaultPorts } from '../../../src/emulator/routes/devices.js';
import {
  createInitialState,
  type DeviceRecord,
  type EmulatorState,
} from '../../../src/emulator/state.js';

function seq(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

function fakeDevice(state: EmulatorState, metro: string, n: number): DeviceRecord {
  const d: DeviceRecord = {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    projectId: state.projects[0]!.id,
    hostname: `d${n}`,
    plan: 'c3.small.x86',
    metro,
    facility: '',
    operatingSystem: 'flatcar_stable',
    tags: [],
    userdata: '',
    customdata: {},
    billingCycle: 'hourly',
    locked: false,
    alwaysPxe: false,
    networkFrozen: false,
    spotInstance: false,
    createdAt: 0,
    updatedAt: 0,
    timeline: [{ state: 'queued', at: 0 }],
    events: [],
    ports: defaultPorts(2),
    rootPassword: 'x',
    switchUuid: 'x',
  };
  state.devices.push(d);
  return d;
}

describe('address block', () => {
  it('never draws 127.0.x.x or 127.1.x.x, and stays inside 127.0.0.0/8', () => {
    for (const r of [0, 0.0001, 0.5, 0.9999]) {
      const b = drawAddressBlock(() => r);
      expect(b.v4Octet).toBeGreaterThanOrEqual(2);
      expect(b.v4Octet).toBeLessThanOrEqual(255);
      const { all } = rangesOf(b);
      expect(isLoopbackV4(intToIpv4(all.start))).toBe(true);
      expect(isLoopbackV4(intToIpv4(all.start + all.size - 1))).toBe(true);
    }
  });

  it('gives two instances different blocks (different draws, or a block claimed in-process)', () => {
    expect(drawAddressBlock(seq([0.1])).v4Octet).not.toBe(drawAddressBlock(seq([0.9])).v4Octet);
    const a = drawAddressBlock(() => 0.5);
    claimAddressBlock(a);
    try {
      expect(drawAddressBlock(() => 0.5).v4Octet).not.toBe(a.v4Octet);
    } finally {
      releaseAddressBlock(a);
    }
  });

  it('splits the /16 into public, private and elastic ranges that do not overlap', () => {
    const r = rangesOf({ v4Octet: 42, v6Hextet: 1 });
    expect(intToIpv4(r.publicManagement.start)).toBe('127.42.0.0');
    expect(intToIpv4(r.privateManagement.start)).toBe('127.42.128.0');
    expect(intToIpv4(r.elastic.start)).toBe('127.42.192.0');
    expect(r.elastic.start + r.elastic.size).toBe(r.all.start + r.all.size);
  });
});

describe('address math', () => {
  it('converts and masks IPv4', () => {
    expect(intToIpv4(ipv4ToInt('127.9.1.255'))).toBe('127.9.1.255');
    expect(v4Netmask(31)).toBe('255.255.255.254');
    expect(v4Netmask(25)).toBe('255.255.255.128');
    expect(v4Netmask(32)).toBe('255.255.255.255');
  });

  it('parses only block-aligned CIDRs', () => {
    expect(parseV4Cidr('127.5.192.4/30')).toEqual({ network: ipv4ToInt('127.5.192.4'), cidr: 30 });
    expect(parseV4Cidr('127.5.192.5')).toEqual({ network: ipv4ToInt('127.5.192.5'), cidr: 32 });
    expect(parseV4Cidr('127.5.192.5/30')).toBeUndefined();
    expect(parseV4Cidr('300.1.1.1/32')).toBeUndefined();
    expect(parseV4Cidr('nonsense')).toBeUndefined();
  });

  it('finds the first free aligned block', () => {
    const within = { start: 0, size: 64 };
    expect(firstFreeAligned(within, 8, [])).toBe(0);
    expect(firstFreeAligned(within, 8, [{ start: 0, size: 2 }])).toBe(8);
    expect(
      firstFreeAligned(within, 2, [
        { start: 0, size: 2 },
        { start: 4, size: 4 },
      ]),
    ).toBe(2);
    expect(firstFreeAligned(within, 64, [{ start: 63, size: 1 }])).toBeUndefined();
  });

  it('forms IPv6 /127 pairs in the documentation prefix', () => {
    const p = v6Pair({ v4Octet: 2, v6Hextet: 0xabc }, 1, 1);
    expect(p).toEqual({
      network: '2001:db8:abc:100::2',
      gateway: '2001:db8:abc:100::2',
      address: '2001:db8:abc:100::3',
    });
  });
});

describe('management addresses', () => {
  it('hands out loopback /31s: public from the lower half, private from a per-metro /25', () => {
    const state = createInitialState({ now: 0, addressing: { v4Octet: 77, v6Hextet: 0x1234 } });
    const d1 = fakeDevice(state, 'sv', 1);
    const d2 = fakeDevice(state, 'sv', 2);
    const d3 = fakeDevice(state, 'da', 3);
    for (const d of [d1, d2, d3])
      assignManagementAddresses(state, d, { publicV4: 31, publicV6: true }, 0);

    const of = (d: DeviceRecord) => state.assignments.filter((a) => a.deviceId === d.id);
    for (const a of state.assignments.filter((x) => x.addressFamily === 4)) {
      expect(isLoopbackV4(a.address)).toBe(true);
      expect(a.address.startsWith('127.77.')).toBe(true);
      expect(a.address).not.toBe('127.0.0.1');
    }
    const pub1 = of(d1).find((a) => a.public && a.addressFamily === 4)!;
    expect(pub1).toMatchObject({
      network: '127.77.0.0',
      gateway: '127.77.0.0',
      address: '127.77.0.1',
      cidr: 31,
    });
    const pub2 = of(d2).find((a) => a.public && a.addressFamily === 4)!;
    expect(pub2.address).toBe('127.77.0.3');
    const priv1 = of(d1).find((a) => !a.public)!;
    const priv2 = of(d2).find((a) => !a.public)!;
    const priv3 = of(d3).find((a) => !a.public)!;
    expect(priv1).toMatchObject({ address: '127.77.128.1', gateway: '127.77.128.0', cidr: 31 });
    expect(priv2.address).toBe('127.77.128.3');
    // Another metro gets its own /25.
    expect(priv3.address).toBe('127.77.128.129');
    expect(priv1.reservationId).toBe(priv2.reservationId);
    expect(priv3.reservationId).not.toBe(priv1.reservationId);
    const v6 = of(d1).find((a) => a.addressFamily === 6)!;
    expect(v6).toMatchObject({
      address: '2001:db8:1234:100::3',
      gateway: '2001:db8:1234:100::2',
      cidr: 127,
    });
  });

  it('adds a second /25 when the first is full', () => {
    const state = createInitialState({ now: 0, addressing: { v4Octet: 9, v6Hextet: 1 } });
    for (let i = 0; i < 65; i++) {
      assignManagementAddresses(
        state,
        fakeDevice(state, 'am', i),
        { publicV4: null, publicV6: false },
        0,
      );
    }
    const blocks = state.reservations.filter((r) => r.type === 'private_ipv4');
    expect(blocks.map((b) => `${b.network}/${b.cidr}`)).toEqual([
      '127.9.128.0/25',
      '127.9.128.128/25',
    ]);
  });

  it('reserves aligned Elastic IP blocks from their own range', () => {
    const state = createInitialState({ now: 0, addressing: { v4Octet: 200, v6Hextet: 1 } });
    const common = {
      projectId: state.projects[0]!.id,
      tags: [],
      customdata: {},
      state: 'created' as const,
    };
    const a = reserveElastic(
      state,
      { ...common, type: 'public_ipv4', quantity: 1, metro: 'sv' },
      0,
    );
    const b = reserveElastic(
      state,
      { ...common, type: 'public_ipv4', quantity: 8, metro: 'sv' },
      0,
    );
    const c = reserveElastic(state, { ...common, type: 'global_ipv4', quantity: 1 }, 0);
    expect(`${a.network}/${a.cidr}`).toBe('127.200.192.0/32');
    expect(`${b.network}/${b.cidr}`).toBe('127.200.192.8/29');
    expect(`${c.network}/${c.cidr}`).toBe('127.200.192.1/32');
    expect(c.global).toBe(true);
  });
});
