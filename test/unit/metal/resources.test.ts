import { describe, expect, it } from 'vitest';
import { createMetalClient } from '../../../src/metal/index.js';
import { BASE, FakeClock, TOKEN, device, empty, fakeFetch, json, setup } from './fakes.js';

describe('requests on the wire', () => {
  it('sends auth, accept, user agent; content type only with a body', async () => {
    const { client, requests } = setup([
      () => json(200, device('d1')),
      () => json(200, device('d1')),
    ]);
    await client.getDevice('d1');
    await client.updateDevice('d1', { locked: false, tags: [] });
    const [get, put] = requests;
    expect(get!.headers['x-auth-token']).toBe(TOKEN);
    expect(get!.headers.accept).toBe('application/json');
    expect(get!.headers['user-agent']).toMatch(/^loko\/\d+\.\d+\.\d+/);
    expect(get!.headers['content-type']).toBeUndefined();
    expect(get!.body).toBeUndefined();
    expect(put!.method).toBe('PUT');
    expect(put!.url.pathname).toBe('/metal/v1/devices/d1');
    expect(put!.headers['content-type']).toBe('application/json');
    expect(put!.body).toBe('{"locked":false,"tags":[]}');
  });

  it('sends include/exclude comma-joined', async () => {
    const { client, requests } = setup(() => json(200, device('d1')));
    await client.getDevice('d1', { include: ['project', 'metro'], exclude: ['plan'] });
    expect(requests[0]!.url.searchParams.get('include')).toBe('project,metro');
    expect(requests[0]!.url.searchParams.get('exclude')).toBe('plan');
  });

  it('encodes ids as one path segment', async () => {
    const { client, requests } = setup(() => json(200, device('x')));
    await client.getDevice('../projects/x');
    expect(requests[0]!.url.pathname).toBe('/metal/v1/devices/..%2Fprojects%2Fx');
  });

  it('creates a device with POST /projects/{id}/devices', async () => {
    const { client, requests } = setup(() => json(201, device('d1', { state: 'queued' })));
    const d = await client.createDevice('p1', {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'flatcar_stable',
      hostname: 'c1-controller-0',
      tags: ['loko:cluster=c1'],
      no_ssh_keys: false,
      userdata: '{"ignition":{}}',
    });
    expect(d.state).toBe('queued');
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url.pathname).toBe('/metal/v1/projects/p1/devices');
    expect(JSON.parse(requests[0]!.body!)).toMatchObject({
      no_ssh_keys: false,
      hostname: 'c1-controller-0',
    });
  });

  it('deletes devices: 204 deleted, 404 absent, force_delete=false kept', async () => {
    const { client, requests } = setup([() => empty(204), () => json(404, { error: 'Not found' })]);
    await expect(client.deleteDevice('d1', { forceDelete: false })).resolves.toBe('deleted');
    await expect(client.deleteDevice('d2')).resolves.toBe('absent');
    expect(requests[0]!.method).toBe('DELETE');
    expect(requests[0]!.url.search).toBe('?force_delete=false');
    expect(requests[1]!.url.search).toBe('');
  });

  it('DELETE errors other than 404 reject', async () => {
    const { client } = setup(() =>
      json(422, { error: 'Cannot delete a device while it is provisioning' }),
    );
    await expect(client.deleteDevice('d1')).rejects.toThrow(
      'DELETE /devices/d1: 422 Unprocessable Entity: Cannot delete a device while it is provisioning',
    );
  });

  it('device actions and userdata', async () => {
    const { client, requests } = setup([
      () => empty(202),
      () => json(200, { userdata: '#!ipxe' }),
      () => json(200, {}),
    ]);
    await client.deviceAction('d1', 'reinstall', { deprovision_fast: true, preserve_data: false });
    await expect(client.getUserdata('d1')).resolves.toBe('#!ipxe');
    await expect(client.getUserdata('d2')).resolves.toBe('');
    expect(requests[0]!.url.pathname).toBe('/metal/v1/devices/d1/actions');
    expect(JSON.parse(requests[0]!.body!)).toEqual({
      type: 'reinstall',
      deprovision_fast: true,
      preserve_data: false,
    });
    expect(requests[1]!.url.pathname).toBe('/metal/v1/devices/d1/userdata');
  });

  it('IP calls', async () => {
    const { client, requests } = setup([
      () => json(201, { id: 'r1', type: 'public_ipv4', cidr: 30, state: 'created' }),
      () => json(200, { ip_addresses: [{ id: 'a1', address: '1.2.3.4' }] }),
      () => json(201, { id: 'a2', address: '147.75.1.2' }),
      () => empty(204),
      () => json(404, { error: 'Not found' }),
    ]);
    await client.createIPReservation('p1', {
      type: 'public_ipv4',
      quantity: 4,
      metro: 'da',
      fail_on_approval_required: false,
    });
    await client.listDeviceIPs('d1');
    await client.assignIP('d1', '147.75.1.2/32');
    await expect(client.deleteIP('a2')).resolves.toBe('deleted');
    await expect(client.deleteIP('a2')).resolves.toBe('absent');
    expect(requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      'POST /metal/v1/projects/p1/ips',
      'GET /metal/v1/devices/d1/ips',
      'POST /metal/v1/devices/d1/ips',
      'DELETE /metal/v1/ips/a2',
      'DELETE /metal/v1/ips/a2',
    ]);
    expect(JSON.parse(requests[0]!.body!)).toEqual({
      type: 'public_ipv4',
      quantity: 4,
      metro: 'da',
      fail_on_approval_required: false,
    });
    expect(JSON.parse(requests[2]!.body!)).toEqual({ address: '147.75.1.2/32' });
  });

  it('hardware reservations: list (provisionable=only, all pages) and get', async () => {
    const hw = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      plan: { slug: 'c3.small.x86' },
      facility: {
        code: 'sv15',
        metro: { id: 'm', code: 'sv', name: 'Silicon Valley', country: 'US' },
      },
      provisionable: true,
      spare: false,
      need_of_service: false,
      ...extra,
    });
    const { client, requests } = setup([
      () =>
        json(200, {
          hardware_reservations: [hw('h1'), hw('h2')],
          meta: { next: { href: '/metal/v1/projects/p1/hardware-reservations?page=2' } },
        }),
      () => json(200, { hardware_reservations: [hw('h3')], meta: { next: null } }),
      () => json(200, { hardware_reservations: [], meta: {} }),
      () => json(200, hw('h1', { provisionable: false, device: { href: '/metal/v1/devices/d1' } })),
      () => json(404, { errors: ['Not found'] }),
    ]);
    const all = await client.listHardwareReservations('p1', { provisionableOnly: true });
    expect(all.map((r) => r.id)).toEqual(['h1', 'h2', 'h3']);
    expect(all[0]!.facility?.metro?.code).toBe('sv');
    await expect(client.listHardwareReservations('p1')).resolves.toEqual([]);
    const one = await client.getHardwareReservation('h1', { include: ['device'] });
    expect(one).toMatchObject({ provisionable: false, device: { href: '/metal/v1/devices/d1' } });
    await expect(client.getHardwareReservation('gone')).rejects.toMatchObject({
      name: 'MetalApiError',
      status: 404,
    });
    expect(requests.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual([
      'GET /metal/v1/projects/p1/hardware-reservations?provisionable=only&per_page=100',
      'GET /metal/v1/projects/p1/hardware-reservations?provisionable=only&page=2&per_page=100',
      'GET /metal/v1/projects/p1/hardware-reservations?per_page=100',
      'GET /metal/v1/hardware-reservations/h1?include=device',
      'GET /metal/v1/hardware-reservations/gone',
    ]);
  });

  it('lookups read unpaginated envelopes once', async () => {
    const { client, requests } = setup([
      () => json(200, { metros: [{ id: 'm', code: 'da', name: 'Dallas', country: 'US' }] }),
      () => json(200, { plans: [{ id: 'p', slug: 'c3.small.x86' }] }),
      () => json(200, { operating_systems: [{ id: 'o', slug: 'flatcar_stable' }] }),
      () => json(200, { capacity: { da: { 'c3.small.x86': { level: 'normal' } } } }),
    ]);
    expect(await client.listMetros()).toHaveLength(1);
    expect(await client.listPlans()).toHaveLength(1);
    expect(await client.listOperatingSystems()).toHaveLength(1);
    expect(await client.getMetroCapacity()).toEqual({
      da: { 'c3.small.x86': { level: 'normal' } },
    });
    expect(requests.map((r) => r.url.pathname + r.url.search)).toEqual([
      '/metal/v1/locations/metros',
      '/metal/v1/plans',
      '/metal/v1/operating-systems',
      '/metal/v1/capacity/metros',
    ]);
  });

  it('capacity check sends quantity as a string and reads it back as a number', async () => {
    const { client, requests } = setup(() =>
      json(200, {
        servers: [{ metro: 'da', plan: 'c3.small.x86', quantity: '3', available: false }],
      }),
    );
    await expect(
      client.checkMetroCapacity([{ metro: 'da', plan: 'c3.small.x86', quantity: 3 }]),
    ).resolves.toEqual([{ metro: 'da', plan: 'c3.small.x86', quantity: 3, available: false }]);
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url.pathname).toBe('/metal/v1/capacity/metros');
    expect(JSON.parse(requests[0]!.body!)).toEqual({
      servers: [{ metro: 'da', plan: 'c3.small.x86', quantity: '3' }],
    });
  });

  it('BGP config: {} when never enabled; request answers 204', async () => {
    const { client, requests } = setup([
      () => json(200, {}),
      () => empty(204),
      () => json(200, { status: 'enabled', asn: 65000 }),
    ]);
    await expect(client.getBgpConfig('p1')).resolves.toEqual({});
    await client.requestBgpConfig('p1', { deployment_type: 'local', asn: 65000 });
    await expect(client.getBgpConfig('p1')).resolves.toMatchObject({ status: 'enabled' });
    expect(requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      'GET /metal/v1/projects/p1/bgp-config',
      'POST /metal/v1/projects/p1/bgp-configs',
      'GET /metal/v1/projects/p1/bgp-config',
    ]);
    expect(JSON.parse(requests[1]!.body!)).toEqual({ deployment_type: 'local', asn: 65000 });
  });

  it('projects', async () => {
    const { client, requests } = setup([() => json(200, { id: 'p1', name: 'x' })]);
    await expect(client.getProject('p1')).resolves.toMatchObject({ id: 'p1' });
    expect(requests[0]!.url.pathname).toBe('/metal/v1/projects/p1');
  });

  it('createMetalClient normalises the base URL', async () => {
    const clock = new FakeClock();
    const { fetch, requests } = fakeFetch(clock, () => json(200, { plans: [] }));
    const client = createMetalClient({
      baseUrl: `${BASE}/`,
      token: TOKEN,
      fetch,
      sleep: clock.sleep,
      now: clock.now,
    });
    expect(client.baseUrl).toBe(BASE);
    await client.listPlans();
    expect(requests[0]!.url.href).toBe(`${BASE}/plans`);
  });
});
