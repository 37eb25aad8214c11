import { describe, expect, it } from 'vitest';
import { useEmulator, type Json } from '../../harness/emulator.js';

describe('lookups, projects and BGP', () => {
  const emu = useEmulator();

  it('lists metros with UUIDs and gets one', async () => {
    const { api } = emu();
    const r = await api('GET', '/locations/metros');
    const codes = r.body.metros.map((m: { code: string }) => m.code);
    for (const c of ['sv', 'da', 'dc', 'ny', 'am', 'fr', 'sg', 'sy']) expect(codes).toContain(c);
    const sv = r.body.metros.find((m: { code: string }) => m.code === 'sv');
    expect(sv.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await api('GET', `/locations/metros/${sv.id}`)).body).toEqual(sv);
    expect(r.body.meta).toBeUndefined(); // unpaginated envelope
  });

  it('lists plans with available_in_metros hrefs and filters by slug', async () => {
    const { api } = emu();
    const metros = (await api('GET', '/locations/metros')).body.metros as Array<{
      id: string;
      code: string;
    }>;
    const plans = (await api('GET', '/plans')).body.plans as Json[];
    const slugs = plans.map((p) => p.slug);
    for (const s of [
      'c3.small.x86',
      'c3.medium.x86',
      'm3.small.x86',
      'm3.large.x86',
      'n3.xlarge.x86',
      's3.xlarge.x86',
    ]) {
      expect(slugs).toContain(s);
    }
    const n3 = plans.find((p) => p.slug === 'n3.xlarge.x86')!;
    expect(n3.specs.nics[0].count).toBe(4);
    const sg = metros.find((m) => m.code === 'sg')!;
    expect(n3.available_in_metros.some((a: { href: string }) => a.href.endsWith(sg.id))).toBe(
      false,
    );
    const sv = metros.find((m) => m.code === 'sv')!;
    expect(n3.available_in_metros).toContainEqual({
      href: `/metal/v1/locations/metros/${sv.id}`,
      price: { hour: 4.5 },
    });
    const one = await api('GET', '/plans?slug=c3.small.x86');
    expect(one.body.plans).toHaveLength(1);
  });

  it('lists operating systems with provisionable_on', async () => {
    const { api } = emu();
    const os = (await api('GET', '/operating-systems')).body.operating_systems as Json[];
    const bySlug = new Map(os.map((o) => [o.slug, o]));
    for (const s of ['ubuntu_22_04', 'ubuntu_24_04', 'debian_12', 'flatcar_stable', 'rocky_9'])
      expect(bySlug.has(s)).toBe(true);
    expect(bySlug.get('flatcar_stable')!.provisionable_on).toContain('n3.xlarge.x86');
    expect(bySlug.get('rocky_9')!.provisionable_on).not.toContain('n3.xlarge.x86');
  });

  it('reports capacity per metro and checks it', async () => {
    const { api } = emu();
    const cap = (await api('GET', '/capacity/metros')).body.capacity;
    expect(cap.sv['c3.small.x86']).toEqual({ level: 'normal' });
    expect(cap.sg['s3.xlarge.x86']).toEqual({ level: 'unavailable' });
    const check = await api('POST', '/capacity/metros', {
      servers: [
        { metro: 'sv', plan: 'c3.small.x86', quantity: 3 },
        { metro: 'sg', plan: 's3.xlarge.x86', quantity: '1' },
        { metro: 'sy', plan: 'm3.large.x86', quantity: 6 },
        { metro: 'sg', plan: 'n3.xlarge.x86', quantity: 1 },
      ],
    });
    expect(check.status).toBe(200);
    expect(check.body.servers.map((s: { available: boolean }) => s.available)).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect(check.body.servers[0]).toEqual({
      metro: 'sv',
      plan: 'c3.small.x86',
      quantity: '3',
      available: true,
    });
    const bad = await api('POST', '/capacity/metros', {
      servers: [{ metro: 'zz', plan: 'c3.small.x86', quantity: 1 }],
    });
    expect(bad.status).toBe(422);
  });

  it('lists and gets the project', async () => {
    const { api } = emu();
    const list = await api('GET', '/projects');
    expect(list.body.projects.map((p: { id: string }) => p.id)).toEqual([emu().projectId]);
    expect(list.body.meta).toMatchObject({ total: 1, current_page: 1, last_page: 1 });
    const p = await api('GET', `/projects/${emu().projectId}?include=organization`);
    expect(p.body).toMatchObject({
      id: emu().projectId,
      href: `/metal/v1/projects/${emu().projectId}`,
    });
    expect(p.body.organization.name).toBeDefined();
  });

  it('answers {} for bgp-config until requested, then the config; a second request is a 422', async () => {
    const { api } = emu();
    const path = `/projects/${emu().projectId}`;
    expect((await api('GET', `${path}/bgp-config`)).body).toEqual({});
    expect(
      (
        await api('POST', `${path}/bgp-configs`, {
          deployment_type: 'local',
          asn: 65000,
          md5: 'short',
        })
      ).status,
    ).toBe(422);
    expect(
      (await api('POST', `${path}/bgp-configs`, { deployment_type: 'regional', asn: 65000 }))
        .status,
    ).toBe(422);
    const ok = await api('POST', `${path}/bgp-configs`, {
      deployment_type: 'local',
      asn: 65000,
      md5: 'Secret12345',
    });
    expect(ok.status).toBe(204);
    expect(ok.body).toBeUndefined();
    const cfg = (await api('GET', `${path}/bgp-config`)).body;
    expect(cfg).toMatchObject({
      deployment_type: 'local',
      asn: 65000,
      status: 'enabled',
      max_prefix: 10,
      md5: 'Secret12345',
    });
    const again = await api('POST', `${path}/bgp-configs`, {
      deployment_type: 'local',
      asn: 65000,
    });
    expect(again.status).toBe(422);
  });
});
