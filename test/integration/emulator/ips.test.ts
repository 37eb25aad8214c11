import { describe, expect, it } from 'vitest';
import { isLoopbackV4 } from '../../../src/emulator/index.js';
import { deviceInput, useEmulator } from '../../harness/emulator.js';

describe('IP reservations and assignments', () => {
  const emu = useEmulator();
  const ips = () => `/projects/${emu().projectId}/ips`;

  async function activeDevice(overrides: Record<string, unknown> = {}): Promise<{ id: string }> {
    const { api, control } = emu();
    const d = await api('POST', `/projects/${emu().projectId}/devices`, deviceInput(overrides));
    expect(d.status).toBe(201);
    await control.advanceClock(5);
    return d.body;
  }

  it('reserves public_ipv4 in a metro (power-of-2 quantity) with tags and details', async () => {
    const { api } = emu();
    const r = await api('POST', ips(), {
      type: 'public_ipv4',
      metro: 'SV',
      quantity: 4,
      tags: ['loko:cluster=a'],
      details: 'ingress',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      type: 'public_ipv4',
      address_family: 4,
      cidr: 30,
      public: true,
      management: false,
      state: 'created',
      tags: ['loko:cluster=a'],
      details: 'ingress',
      metro: { code: 'sv' },
      assignments: [],
    });
    expect(isLoopbackV4(r.body.network)).toBe(true);
    expect(r.body.netmask).toBe('255.255.255.252');
    const got = await api('GET', `/ips/${r.body.id}`);
    expect(got.body.id).toBe(r.body.id);
  });

  it('reserves global_ipv4 without a metro and validates requests', async () => {
    const { api } = emu();
    const g = await api('POST', ips(), { type: 'global_ipv4', quantity: 1 });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({ type: 'global_ipv4', global_ip: true, cidr: 32 });
    expect(g.body.metro).toBeUndefined();
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'public_ipv4', quantity: 3, metro: 'sv' }, /power of 2/],
      [{ type: 'public_ipv4', quantity: 2 }, /metro is required/],
      [{ type: 'global_ipv4', quantity: 1, metro: 'sv' }, /must not have a metro/],
      [{ type: 'public_ipv4', quantity: 2, metro: 'xx' }, /not a valid metro/],
      [{ type: 'fancy_ipv9', quantity: 1 }, /type must be one of/],
      [{ type: 'public_ipv4', metro: 'sv' }, /quantity is required/],
    ];
    for (const [body, msg] of bad) {
      const r = await api('POST', ips(), body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors.join(' ')).toMatch(msg);
    }
  });

  it('lists the project IPs with a types filter and meta', async () => {
    const { api } = emu();
    await activeDevice({ hostname: 'lister' });
    const all = await api('GET', ips());
    const types = new Set(all.body.ip_addresses.map((r: { type: string }) => r.type));
    expect(types).toEqual(new Set(['public_ipv4', 'private_ipv4', 'public_ipv6', 'global_ipv4']));
    expect(all.body.meta.total).toBe(all.body.ip_addresses.length);
    const onlyGlobal = await api('GET', `${ips()}?types=global_ipv4`);
    expect(
      onlyGlobal.body.ip_addresses.every((r: { type: string }) => r.type === 'global_ipv4'),
    ).toBe(true);
  });

  it('assigns an Elastic IP to a device in the same metro, then unassigns and deletes', async () => {
    const { api } = emu();
    const d = await activeDevice({ hostname: 'eip-holder' });
    const r = (await api('POST', ips(), { type: 'public_ipv4', metro: 'sv', quantity: 2 })).body;
    const address = `${r.network}/32`;

    const a = await api('POST', `/devices/${d.id}/ips`, { address });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      address: r.network,
      cidr: 32,
      management: false,
      public: true,
      assigned_to: { href: `/metal/v1/devices/${d.id}` },
      parent_block: { network: r.network, cidr: 31, href: `/metal/v1/ips/${r.id}` },
    });
    expect((await api('POST', `/devices/${d.id}/ips`, { address })).body.errors[0]).toMatch(
      /already assigned/,
    );
    expect((await api('POST', `/devices/${d.id}/ips`, { address: '192.0.2.1/32' })).status).toBe(
      422,
    );
    expect((await api('POST', `/devices/${d.id}/ips`, {})).status).toBe(422);

    const devIps = await api('GET', `/devices/${d.id}/ips`);
    expect(devIps.body.ip_addresses.map((x: { id: string }) => x.id)).toContain(a.body.id);
    const withAssignments = await api('GET', `/ips/${r.id}?include=assignments`);
    expect(withAssignments.body.assignments[0].address).toBe(r.network);
    expect((await api('GET', `/ips/${a.body.id}`)).body.type).toBe('IPAssignment');

    const refused = await api('DELETE', `/ips/${r.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatch(/assignment/);
    expect((await api('DELETE', `/ips/${a.body.id}`)).status).toBe(204);
    expect((await api('DELETE', `/ips/${r.id}`)).status).toBe(204);
    expect((await api('GET', `/ips/${r.id}`)).status).toBe(404);
  });

  it('refuses an Elastic IP from another metro; a global one goes anywhere', async () => {
    const { api } = emu();
    const d = await activeDevice({ hostname: 'in-dallas', metro: 'da' });
    const sv = (await api('POST', ips(), { type: 'public_ipv4', metro: 'sv', quantity: 1 })).body;
    const wrong = await api('POST', `/devices/${d.id}/ips`, { address: `${sv.network}/32` });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0]).toMatch(/metro sv/);
    const g = (await api('POST', ips(), { type: 'global_ipv4', quantity: 1 })).body;
    expect((await api('POST', `/devices/${d.id}/ips`, { address: g.network })).status).toBe(201);
  });

  it('releases management addresses when the device is gone; reservations stay', async () => {
    const { api, control } = emu();
    const d = await activeDevice({ hostname: 'short-lived' });
    const r = (await api('POST', ips(), { type: 'public_ipv4', metro: 'sv', quantity: 1 })).body;
    await api('POST', `/devices/${d.id}/ips`, { address: r.network });
    const mgmt = (await api('GET', `/devices/${d.id}/ips`)).body.ip_addresses.filter(
      (x: { management: boolean }) => x.management,
    );
    expect(mgmt).toHaveLength(3);
    expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(204);
    await control.advanceClock(5);
    for (const a of mgmt) expect((await api('GET', `/ips/${a.id}`)).status).toBe(404);
    const after = await api('GET', `/ips/${r.id}`);
    expect(after.status).toBe(200);
    expect(after.body.assignments).toEqual([]);
  });

  it('puts requests over the public IPv4 quota in review (pending), or 422s on request', async () => {
    const { api } = emu();
    const big = await api('POST', ips(), { type: 'public_ipv4', metro: 'ny', quantity: 256 });
    expect(big.body.state).toBe('pending');
    const strict = await api('POST', ips(), {
      type: 'public_ipv4',
      metro: 'ny',
      quantity: 256,
      fail_on_approval_required: true,
    });
    expect(strict.status).toBe(422);
  });
});
