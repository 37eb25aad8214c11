import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FOREIGN_PROJECT_ID, startEmulator } from '../../../src/emulator/index.js';
import { createMetalClient } from '../../../src/metal/index.js';
import {
  deviceInput,
  startTestEmulator,
  useEmulator,
  withEmulator,
  wrap,
  type Json,
  type TestEmulator,
} from '../../harness/emulator.js';

const list = (emu: TestEmulator, query = '') =>
  emu.api('GET', `/projects/${emu.projectId}/hardware-reservations${query}`);

async function reservations(emu: TestEmulator, query = ''): Promise<Json[]> {
  const res = await list(emu, query);
  expect(res.status).toBe(200);
  return res.body.hardware_reservations as Json[];
}

const summary = (rs: Json[]) =>
  rs.map((r) => `${r.plan.slug}@${r.facility.metro.code}`).sort((a, b) => a.localeCompare(b));

describe('hardware reservations', () => {
  const emu = useEmulator();

  it('seeds 3 × c3.small.x86 in sv and 1 × m3.small.x86 in da, paginated with meta', async () => {
    const page = await list(emu(), '?per_page=3');
    expect(page.status).toBe(200);
    expect(page.body.hardware_reservations).toHaveLength(3);
    expect(page.body.meta).toMatchObject({ total: 4, current_page: 1, last_page: 2 });
    expect(page.body.meta.next.href).toBe(
      `/metal/v1/projects/${emu().projectId}/hardware-reservations?page=2&per_page=3`,
    );
    const all = await reservations(emu());
    expect(summary(all)).toEqual([
      'c3.small.x86@sv',
      'c3.small.x86@sv',
      'c3.small.x86@sv',
      'm3.small.x86@da',
    ]);
    const r = all[0]!;
    expect(r).toMatchObject({
      short_id: r.id.slice(0, 8),
      href: `/metal/v1/hardware-reservations/${r.id}`,
      plan: { slug: 'c3.small.x86' },
      facility: { code: 'sv15', metro: { code: 'sv' } },
      project: { href: `/metal/v1/projects/${emu().projectId}` },
      provisionable: true,
      spare: false,
      need_of_service: false,
    });
    expect(r.device).toBeUndefined();
    expect(r.switch_uuid).toMatch(/^[0-9a-f]{8}$/);
    expect(r.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(new Set(all.map((x) => x.id)).size).toBe(4);
  });

  it('gets one by id: 200, 404 for unknown ids, 403 outside the project', async () => {
    const [r] = await reservations(emu());
    const got = await emu().api('GET', `/hardware-reservations/${r.id}?include=project`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(r.id);
    expect(got.body.project.id).toBe(emu().projectId);
    expect(
      (await emu().api('GET', '/hardware-reservations/00000000-0000-4000-8000-000000000000'))
        .status,
    ).toBe(404);
    expect((await emu().api('GET', '/hardware-reservations/nope')).status).toBe(404);
    expect(
      (await emu().api('GET', `/projects/${FOREIGN_PROJECT_ID}/hardware-reservations`)).status,
    ).toBe(403);
  });

  it('answers the typed client (MetalClient) over HTTP', async () => {
    const client = createMetalClient({ baseUrl: emu().url, token: emu().token });
    const all = await client.listHardwareReservations(emu().projectId, { provisionableOnly: true });
    expect(all).toHaveLength(4);
    const one = await client.getHardwareReservation(all[3]!.id, { include: ['project'] });
    expect(one).toMatchObject({ id: all[3]!.id, provisionable: true, spare: false });
    expect(one.facility?.metro?.code).toBe('da');
  });

  it('filters by provisionable=only, state and query; rejects unknown filter values', async () => {
    expect(await reservations(emu(), '?provisionable=only')).toHaveLength(4);
    expect(await reservations(emu(), '?state=active')).toHaveLength(4);
    expect(await reservations(emu(), '?state=spare')).toHaveLength(0);
    expect(summary(await reservations(emu(), '?query=m3.small'))).toEqual(['m3.small.x86@da']);
    expect((await list(emu(), '?state=broken')).status).toBe(422);
    expect((await list(emu(), '?provisionable=yes')).status).toBe(422);
  });
});

describe('devices on hardware reservations', () => {
  it('lands a device on a reservation by UUID; the reservation follows it until it is gone', async () => {
    await withEmulator(async (emu) => {
      const { api, control } = emu;
      const [r] = await reservations(emu, '?query=m3.small');
      const created = await api(
        'POST',
        `/projects/${emu.projectId}/devices`,
        deviceInput({
          hostname: 'reserved-0',
          metro: 'da',
          plan: 'm3.small.x86',
          hardware_reservation_id: r.id,
        }),
      );
      expect(created.status).toBe(201);
      const d = created.body;
      expect(d.hardware_reservation).toEqual({ href: `/metal/v1/hardware-reservations/${r.id}` });
      expect(d.switch_uuid).toBe(r.switch_uuid);

      const held = (await api('GET', `/hardware-reservations/${r.id}`)).body;
      expect(held.provisionable).toBe(false);
      expect(held.device).toEqual({ href: `/metal/v1/devices/${d.id}` });
      const expanded = (await api('GET', `/hardware-reservations/${r.id}?include=device`)).body;
      expect(expanded.device).toMatchObject({ id: d.id, hostname: 'reserved-0' });
      const withRes = (await api('GET', `/devices/${d.id}?include=hardware_reservation`)).body;
      expect(withRes.hardware_reservation).toMatchObject({ id: r.id, provisionable: false });
      expect(await reservations(emu, '?provisionable=only')).toHaveLength(3);
      expect(summary(await reservations(emu, '?query=reserved-0'))).toEqual(['m3.small.x86@da']);

      // Reserved/on-demand device filters.
      const reserved = await api('GET', `/projects/${emu.projectId}/devices?reserved=true`);
      expect(reserved.body.devices.map((x: Json) => x.id)).toEqual([d.id]);
      const onDemand = await api('GET', `/projects/${emu.projectId}/devices?type=ondemand`);
      expect(onDemand.body.devices).toEqual([]);

      // A taken reservation is refused.
      const again = await api(
        'POST',
        `/projects/${emu.projectId}/devices`,
        deviceInput({
          hostname: 'reserved-1',
          metro: 'da',
          plan: 'm3.small.x86',
          hardware_reservation_id: r.id,
        }),
      );
      expect(again.status).toBe(422);
      expect(again.body.errors.join(' ')).toContain('not provisionable');

      // Deprovisioning keeps it held; once the device is gone it is provisionable again.
      await control.advanceClock(5);
      expect((await api('DELETE', `/devices/${d.id}`)).status).toBe(204);
      expect((await api('GET', `/hardware-reservations/${r.id}`)).body.provisionable).toBe(false);
      await control.advanceClock(3);
      expect((await api('GET', `/devices/${d.id}`)).status).toBe(404);
      const freed = (await api('GET', `/hardware-reservations/${r.id}`)).body;
      expect(freed.provisionable).toBe(true);
      expect(freed.device).toBeUndefined();
    });
  });

  it('next-available picks a provisionable reservation of the plan in the metro, until none is left', async () => {
    await withEmulator(async (emu) => {
      const { api } = emu;
      const create = (i: number) =>
        api(
          'POST',
          `/projects/${emu.projectId}/devices`,
          deviceInput({ hostname: `next-${i}`, hardware_reservation_id: 'next-available' }),
        );
      const taken = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const res = await create(i);
        expect(res.status).toBe(201);
        taken.add(res.body.hardware_reservation.href);
      }
      expect(taken.size).toBe(3);
      const exhausted = await create(3);
      expect(exhausted.status).toBe(422);
      expect(exhausted.body.errors).toEqual([
        'No available hardware reservations for plan c3.small.x86 in metro sv',
      ]);
      // Nothing of that plan reserved in another metro either.
      const elsewhere = await api(
        'POST',
        `/projects/${emu.projectId}/devices`,
        deviceInput({
          hostname: 'next-da',
          metro: 'da',
          hardware_reservation_id: 'next-available',
        }),
      );
      expect(elsewhere.status).toBe(422);
      expect(elsewhere.body.errors[0]).toMatch(/no available hardware reservations/i);
      expect(summary(await reservations(emu, '?provisionable=only'))).toEqual(['m3.small.x86@da']);

      // The control API adds one; next-available finds it.
      const added = await emu.control.addHardwareReservation('c3.small.x86', 'sv');
      expect(added).toMatchObject({ plan: { slug: 'c3.small.x86' }, provisionable: true });
      const fourth = await create(4);
      expect(fourth.status).toBe(201);
      expect(fourth.body.hardware_reservation.href).toBe(
        `/metal/v1/hardware-reservations/${added.id}`,
      );
    });
  });

  it('refuses mismatched plan or metro, unknown ids, spares and malformed ids with 422', async () => {
    await withEmulator(async (emu) => {
      const { api } = emu;
      const [c3] = await reservations(emu, '?query=c3.small');
      const create = (extra: Record<string, unknown>) =>
        api('POST', `/projects/${emu.projectId}/devices`, deviceInput(extra));

      const wrongPlan = await create({ plan: 'm3.small.x86', hardware_reservation_id: c3.id });
      expect(wrongPlan.status).toBe(422);
      expect(wrongPlan.body.errors).toEqual([
        `Hardware reservation ${c3.id} is for plan c3.small.x86, not the requested plan m3.small.x86`,
      ]);
      const wrongMetro = await create({ metro: 'da', hardware_reservation_id: c3.id });
      expect(wrongMetro.status).toBe(422);
      expect(wrongMetro.body.errors).toEqual([
        `Hardware reservation ${c3.id} is in metro sv, not the requested metro da`,
      ]);
      const unknown = await create({
        hardware_reservation_id: '00000000-0000-4000-8000-000000000000',
      });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors[0]).toMatch(/not found in this project/);
      expect((await create({ hardware_reservation_id: 'some-reservation' })).status).toBe(422);

      const spare = await emu.control.addHardwareReservation('c3.medium.x86', 'sv', {
        spare: true,
      });
      expect(spare.provisionable).toBe(false);
      expect(await reservations(emu, '?state=spare')).toHaveLength(1);
      const onSpare = await create({ plan: 'c3.medium.x86', hardware_reservation_id: spare.id });
      expect(onSpare.status).toBe(422);
      expect(onSpare.body.errors[0]).toMatch(/spare/);
      // A spare is never picked as next-available.
      expect(
        (await create({ plan: 'c3.medium.x86', hardware_reservation_id: 'next-available' })).status,
      ).toBe(422);

      // No device was created by any of that.
      expect(
        (await api('GET', `/projects/${emu.projectId}/devices`)).body.devices as Json[],
      ).toEqual([]);
      // The empty string (the spec's default) asks for no reservation.
      const plain = await create({ hardware_reservation_id: '' });
      expect(plain.status).toBe(201);
      expect(plain.body.hardware_reservation).toBeUndefined();
    });
  });

  it('takes no on-demand capacity: a reserved plan can be placed where capacity is exhausted', async () => {
    await withEmulator(async (emu) => {
      const { api } = emu;
      // s3.xlarge.x86 is unavailable in sg on demand.
      const r = await emu.control.addHardwareReservation('s3.xlarge.x86', 'sg');
      const input = deviceInput({ metro: 'sg', plan: 's3.xlarge.x86', hostname: 'big' });
      expect((await api('POST', `/projects/${emu.projectId}/devices`, input)).status).toBe(422);
      const res = await api('POST', `/projects/${emu.projectId}/devices`, {
        ...input,
        hardware_reservation_id: r.id,
      });
      expect(res.status).toBe(201);
    });
  });

  it('keeps reservations and what they hold in the state file', async () => {
    const first = await startTestEmulator();
    try {
      const before = await reservations(first);
      const created = await first.api(
        'POST',
        `/projects/${first.projectId}/devices`,
        deviceInput({ hostname: 'kept', hardware_reservation_id: 'next-available' }),
      );
      expect(created.status).toBe(201);
      await first.close();
      const second = wrap(
        await startEmulator({ statePath: first.statePath }),
        first.dir,
        first.statePath,
      );
      try {
        const after = await reservations(second);
        expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
        const held = after.filter((r) => r.device !== undefined);
        expect(held.map((r) => r.device.href)).toEqual([`/metal/v1/devices/${created.body.id}`]);
      } finally {
        await second.close();
      }
    } finally {
      await first.stop();
    }
  });

  it('seeds reservations into state files written before they existed', async () => {
    const first = await startTestEmulator();
    try {
      await first.close();
      const doc = JSON.parse(await readFile(first.statePath, 'utf8'));
      delete doc.state.hardwareReservations;
      await writeFile(first.statePath, JSON.stringify(doc));
      const second = wrap(
        await startEmulator({ statePath: first.statePath }),
        first.dir,
        first.statePath,
      );
      try {
        expect(await reservations(second, '?provisionable=only')).toHaveLength(4);
      } finally {
        await second.close();
      }
    } finally {
      await first.stop();
    }
  });

  it('draws new reservation ids for every fresh state', async () => {
    const a = await withEmulator((emu) => reservations(emu));
    const b = await withEmulator((emu) => reservations(emu));
    expect(a.map((r) => r.id)).not.toEqual(b.map((r) => r.id));
  });
});
