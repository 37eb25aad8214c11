import { describe, expect, it } from 'vitest';
import { isLoopbackV4 } from '../../../src/emulator/index.js';
import { deviceInput, useEmulator, type Json } from '../../harness/emulator.js';

describe('devices', () => {
  const emu = useEmulator();
  const devices = () => `/projects/${emu().projectId}/devices`;

  it('creates a device (201, queued) that becomes active with loopback management addresses', async () => {
    const { api, control } = emu();
    const created = await api(
      'POST',
      devices(),
      deviceInput({ hostname: 'dev-a', userdata: '#!/bin/sh' }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const d = created.body;
    expect(d).toMatchObject({
      hostname: 'dev-a',
      state: 'queued',
      short_id: d.id.slice(0, 8),
      href: `/metal/v1/devices/${d.id}`,
      plan: { slug: 'c3.small.x86' },
      metro: { code: 'sv' },
      operating_system: { slug: 'flatcar_stable' },
      project: { href: `/metal/v1/projects/${emu().projectId}` },
      tags: ['loko:cluster=test'],
      ip_addresses: [],
    });
    expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    await control.advanceClock(1.5);
    const provisioning = await api('GET', `/devices/${d.id}`);
    expect(provisioning.body.state).toBe('provisioning');
    expect(provisioning.body.provisioning_percentage).toBeGreaterThanOrEqual(0);

    await control.advanceClock(3);
    const active = (await api('GET', `/devices/${d.id}`)).body;
    expect(active.state).toBe('active');
    expect(active.provisioning_percentage).toBeUndefined();
    const ips = active.ip_addresses as Json[];
    expect(ips.map((a) => [a.address_family, a.public, a.cidr, a.management])).toEqual([
      [4, true, 31, true],
      [4, false, 31, true],
      [6, true, 127, true],
    ]);
    for (const a of ips.filter((x) => x.address_family === 4)) {
      expect(isLoopbackV4(a.address)).toBe(true);
      expect(a.address).not.toBe('127.0.0.1');
      expect(a.assigned_to).toEqual({ href: `/metal/v1/devices/${d.id}` });
    }
    expect(ips[1]!.parent_block.cidr).toBe(25);
    expect(ips[2]!.address).toMatch(/^2001:db8:/);
    const ports = active.network_ports as Json[];
    expect(ports.map((p) => p.name)).toEqual(['bond0', 'eth0', 'eth1']);
    expect(ports[0]).toMatchObject({
      type: 'NetworkBondPort',
      network_type: 'layer3',
      data: { bonded: true },
    });
    expect(ports[1]).toMatchObject({
      type: 'NetworkPort',
      bond: { name: 'bond0' },
      data: { bonded: true },
    });
    expect(active.actions.map((a: { type: string }) => a.type)).toContain('power_off');
    expect((await api('GET', `/devices/${d.id}/userdata`)).body).toEqual({ userdata: '#!/bin/sh' });
  });

  it('gives a 4-NIC plan eth0-3 in bond0 and bond1', async () => {
    const { api } = emu();
    const d = (
      await api('POST', devices(), deviceInput({ plan: 'n3.xlarge.x86', hostname: 'big' }))
    ).body;
    const ports = d.network_ports as Json[];
    expect(ports.map((p) => p.name)).toEqual(['bond0', 'bond1', 'eth0', 'eth1', 'eth2', 'eth3']);
    expect(ports.find((p) => p.name === 'eth3')!.bond.name).toBe('bond1');
  });

  it('validates the create body with 422s', async () => {
    const { api } = emu();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ plan: 'x9.huge' }, /plan "x9.huge" is not a valid plan/],
      [{ metro: 'zz' }, /metro "zz" is not a valid metro/],
      [{ operating_system: 'windows_95' }, /not a valid operating system/],
      [{ plan: 'n3.xlarge.x86', metro: 'sg' }, /not available in metro sg/],
      [{ plan: 'n3.xlarge.x86', operating_system: 'rocky_9' }, /not provisionable on plan/],
      [{ plan: 's3.xlarge.x86', metro: 'sg' }, /capacity/i],
      [{ ip_addresses: [{ address_family: 4, public: true }] }, /Private IPv4 address is required/],
      [{ metro: undefined }, /metro is required/],
      [{ hostname: 'no_underscores' }, /hostname/],
      [{ tags: 'x' }, /tags must be an array/],
      [{ operating_system: 'custom_ipxe' }, /ipxe_script_url/],
    ];
    for (const [override, message] of cases) {
      const r = await api('POST', devices(), deviceInput(override));
      expect(r.status, JSON.stringify(override)).toBe(422);
      expect(r.body.errors.join(' ')).toMatch(message);
    }
    const notJson = await fetch(`${emu().url}${devices()}`, {
      method: 'POST',
      headers: { 'x-auth-token': emu().token, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(notJson.status).toBe(422);
  });

  it('lists with tag and hostname filters and paginates up to 1000 per page', async () => {
    const { api } = emu();
    for (let i = 0; i < 5; i++) {
      const r = await api(
        'POST',
        devices(),
        deviceInput({ hostname: `pool-x-${i}`, tags: ['loko:cluster=paged'] }),
      );
      expect(r.status).toBe(201);
    }
    const p1 = await api('GET', `${devices()}?tag=loko:cluster=paged&per_page=2`);
    expect(p1.body.devices.map((d: { hostname: string }) => d.hostname)).toEqual([
      'pool-x-0',
      'pool-x-1',
    ]);
    expect(p1.body.meta).toMatchObject({ total: 5, current_page: 1, last_page: 3 });
    expect(p1.body.meta.next.href).toContain('page=2');
    expect(p1.body.meta.previous).toBeUndefined();
    const p3 = await api('GET', p1.body.meta.last.href);
    expect(p3.body.devices.map((d: { hostname: string }) => d.hostname)).toEqual(['pool-x-4']);
    expect(p3.body.meta.next).toBeUndefined();
    const byHost = await api('GET', `${devices()}?hostname=X-3`);
    expect(byHost.body.devices.map((d: { hostname: string }) => d.hostname)).toEqual(['pool-x-3']);
    const all = await api('GET', `${devices()}?per_page=1000`);
    expect(all.body.meta.last_page).toBe(1);
    expect((await api('GET', `${devices()}?per_page=1001`)).status).toBe(422);
  });

  it('updates with PUT', async () => {
    const { api } = emu();
    const d = (await api('POST', devices(), deviceInput({ hostname: 'upd' }))).body;
    const r = await api('PUT', `/devices/${d.id}`, {
      hostname: 'upd2',
      tags: ['t'],
      locked: true,
      customdata: { a: 1 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      hostname: 'upd2',
      tags: ['t'],
      locked: true,
      customdata: { a: 1 },
    });
    expect((await api('PUT', `/devices/${d.id}`, { locked: 'yes' })).status).toBe(422);
  });

  it('refuses DELETE while provisioning or locked, then deprovisions and is gone', async () => {
    const { api, control } = emu();
    const d = (await api('POST', devices(), deviceInput({ hostname: 'del' }))).body;
    const early = await api('DELETE', `/devices/${d.id}`);
    expect(early.status).toBe(422);
    expect(early.body.errors).toEqual(['Cannot delete a device while it is provisioning']);
    await control.advanceClock(5);
    await api('PUT', `/devices/${d.id}`, { locked: true });
    expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(422);
    await api('PUT', `/devices/${d.id}`, { locked: false });
    const del = await api('DELETE', `/devices/${d.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expect((await api('GET', `/devices/${d.id}`)).body.state).toBe('deprovisioning');
    expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(204); // repeated: no change
    await control.advanceClock(5);
    expect((await api('GET', `/devices/${d.id}`)).status).toBe(404);
    expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(404);
  });

  it('runs actions (202) and validates type and state (422)', async () => {
    const { api, control } = emu();
    const d = (await api('POST', devices(), deviceInput({ hostname: 'act' }))).body;
    expect((await api('POST', `/devices/${d.id}/actions`, { type: 'power_off' })).status).toBe(422);
    await control.advanceClock(5);
    const bad = await api('POST', `/devices/${d.id}/actions`, { type: 'self_destruct' });
    expect(bad.status).toBe(422);
    expect((await api('POST', `/devices/${d.id}/actions`, {})).status).toBe(422);
    expect(
      (await api('POST', `/devices/${d.id}/actions`, { type: 'power_on' })).body.errors,
    ).toEqual(['Device is already powered on']);
    const off = await api('POST', `/devices/${d.id}/actions`, { type: 'power_off' });
    expect(off.status).toBe(202);
    expect(off.body).toBeUndefined();
    expect((await api('GET', `/devices/${d.id}`)).body.state).toBe('powering_off');
    await control.advanceClock(3);
    expect((await api('GET', `/devices/${d.id}`)).body.state).toBe('inactive');
    expect((await api('POST', `/devices/${d.id}/actions`, { type: 'power_on' })).status).toBe(202);
    await control.advanceClock(3);
    const re = await api('POST', `/devices/${d.id}/actions`, {
      type: 'reinstall',
      operating_system: 'ubuntu_24_04',
    });
    expect(re.status).toBe(202);
    const during = (await api('GET', `/devices/${d.id}`)).body;
    expect(during).toMatchObject({
      state: 'reinstalling',
      operating_system: { slug: 'ubuntu_24_04' },
    });
    await control.advanceClock(5);
    expect((await api('GET', `/devices/${d.id}`)).body.state).toBe('active');
    expect(
      (
        await api('POST', '/devices/00000000-0000-4000-8000-000000000000/actions', {
          type: 'reboot',
        })
      ).status,
    ).toBe(404);
  });

  it('fails provisioning on request, with the reason in provisioning_events', async () => {
    const { api, control } = emu();
    const rule = await control.failProvisioning('doomed-0', 'No disks detected');
    expect(rule.appliedTo).toBeNull();
    const d = (await api('POST', devices(), deviceInput({ hostname: 'doomed-0' }))).body;
    await control.advanceClock(5);
    const failed = (await api('GET', `/devices/${d.id}`)).body;
    expect(failed.state).toBe('failed');
    const last = failed.provisioning_events.at(-1);
    expect(last).toMatchObject({ type: 'provisioning.failed', state: 'failed' });
    expect(last.body).toContain('No disks detected');
    // Already provisioning devices fail too.
    const d2 = (await api('POST', devices(), deviceInput({ hostname: 'doomed-1' }))).body;
    expect((await control.failProvisioning('doomed-1', 'PXE timeout')).appliedTo).toBe(d2.id);
    await control.advanceClock(5);
    expect((await api('GET', `/devices/${d2.id}`)).body.state).toBe('failed');
    // The next device with the same hostname provisions normally.
    const d3 = (await api('POST', devices(), deviceInput({ hostname: 'doomed-0' }))).body;
    await control.advanceClock(5);
    expect((await api('GET', `/devices/${d3.id}`)).body.state).toBe('active');
  });

  // How long each state lasts is checked on the emulator clock (test/unit/emulator); here only
  // that the real clock drives it, with a bound loose enough for a loaded machine.
  it('turns active on its own at time scale 1, without clock control', async () => {
    const { api } = emu();
    const d = (await api('POST', devices(), deviceInput({ hostname: 'realtime' }))).body;
    const start = Date.now();
    let state = d.state;
    while (state !== 'active' && Date.now() - start < 60_000) {
      await new Promise((r) => setTimeout(r, 250));
      state = (await api('GET', `/devices/${d.id}`)).body.state;
    }
    expect(state).toBe('active');
  });
});
