/**
 * Contract test: drives a realistic flow through the emulator, then validates every response
 * body the request log kept — one per (method, route, status) — against the response schema
 * the published Metal OpenAPI description declares for that path and status. Fails when a
 * status is not declared or a body does not validate.
 *
 * The same validation covers every other emulator of the integration run: the harness saves
 * each instance's samples when it closes, and the run's teardown checks them all
 * (test/harness/contract/global-setup.ts).
 *
 * The spec lives beside the repository (../shared/metal-openapi) and is not copied into it.
 * Without it the test is skipped with a notice; in CI (CI=true) its absence is a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FOREIGN_PROJECT_ID,
  type RequestSummary,
  type ResponseSample,
} from '../../../src/emulator/index.js';
import {
  checkRunLogs,
  isCI,
  loadContract,
  specPath,
  specPresent,
  validateSamples,
  type Contract,
} from '../../harness/contract/validate.js';
import { deviceInput, startTestEmulator, type TestEmulator } from '../../harness/emulator.js';

if (!specPresent()) {
  const msg = `Metal OpenAPI spec not found at ${specPath}: contract test skipped`;
  if (isCI()) {
    describe('Metal API contract', () => {
      it('needs the Metal OpenAPI spec in CI', () => {
        throw new Error(`${msg} — in CI the spec must be present`);
      });
    });
  } else {
    console.warn(`NOTICE: ${msg} (outside CI)`);
    describe.skip('Metal API contract (spec missing)', () => {
      it('skipped', () => undefined);
    });
  }
} else {
  describe('Metal API contract', () => {
    let emu: TestEmulator;
    let contract: Contract;
    const samples: ResponseSample[] = [];
    const summaries: RequestSummary[] = [];

    beforeAll(async () => {
      contract = await loadContract();
      emu = await startTestEmulator();
    });
    afterAll(async () => {
      await emu?.stop();
    });

    /** Keeps the samples and requests seen so far (the log keeps only the last body per status). */
    async function checkpoint(): Promise<void> {
      samples.push(...(await emu.control.responses()));
      summaries.push(await emu.control.summary());
      await emu.control.clearRequests();
    }

    it('rejects bodies that break the spec (self-check of the validator)', () => {
      const bad: ResponseSample[] = [
        {
          method: 'GET',
          route: '/metal/v1/devices/:id',
          status: 200,
          body: { id: 'x', state: 'exploded' },
        },
        {
          method: 'GET',
          route: '/metal/v1/ips/:id',
          status: 200,
          body: { type: 'public_ipv4', quantity: 2 },
        },
        {
          method: 'GET',
          route: '/metal/v1/projects/:id/devices',
          status: 200,
          body: { devices: [{ ip_addresses: [{ cidr: '31' }] }] },
        },
        {
          method: 'GET',
          route: '/metal/v1/projects/:id/devices',
          status: 200,
          body: { devices: [], meta: { next: null } },
        },
        {
          method: 'GET',
          route: '/metal/v1/hardware-reservations/:id',
          status: 200,
          body: { id: 'x', provisionable: 'yes' },
        },
        {
          // The spec's Device is not nullable: a free reservation leaves `device` out.
          method: 'GET',
          route: '/metal/v1/projects/:id/hardware-reservations',
          status: 200,
          body: { hardware_reservations: [{ device: null }] },
        },
        { method: 'GET', route: '/metal/v1/devices/:id', status: 418, body: {} },
        { method: 'POST', route: '/metal/v1/devices/:id/actions', status: 202, body: { ok: true } },
      ];
      const problems = validateSamples(contract, bad);
      expect(problems).toHaveLength(bad.length);
    });

    it('the run check flags broken bodies and routes answered without a validated response', () => {
      const route = (method: string, r: string, statuses: Record<string, number>) => ({
        method,
        route: r,
        count: Object.values(statuses).reduce((a, b) => a + b, 0),
        statuses,
      });
      const result = checkRunLogs(contract, [
        {
          testFile: 'a.test.ts',
          responses: [
            { method: 'GET', route: '/metal/v1/plans', status: 200, body: { plans: [] } },
            { method: 'GET', route: '/metal/v1/devices/:id', status: 200, body: { state: 'x' } },
            { method: 'GET', route: '/metal/v1/projects/:id/devices', status: 503, body: {} },
          ],
          summary: {
            total: 5,
            routes: [
              route('GET', '/metal/v1/plans', { 200: 1 }),
              route('GET', '/metal/v1/devices/:id', { 200: 1 }),
              route('GET', '/metal/v1/projects/:id/devices', { 503: 1 }),
              route('POST', '/metal/v1/projects/:id/devices', { 0: 1 }), // reset: no body
              route('GET', '(unmatched)', { 404: 1 }),
            ],
          },
        },
        {
          testFile: 'b.test.ts',
          responses: [],
          summary: { total: 1, routes: [route('GET', '/metal/v1/operating-systems', { 200: 1 })] },
        },
      ]);
      expect(result.problems).toEqual([
        expect.stringMatching(
          /^GET \/devices\/\{id\} 200: body does not match.*\(in a\.test\.ts\)$/,
        ),
      ]);
      expect(result.uncovered).toEqual([
        'GET /metal/v1/devices/:id (requested in a.test.ts)',
        'GET /metal/v1/operating-systems (requested in b.test.ts)',
      ]);
      expect(result).toMatchObject({ routes: 4, validated: 2 });
    });

    it('answers every request of a realistic flow with a body the spec accepts', async () => {
      const pid = emu.projectId;
      const { api, control } = emu;

      // Projects, auth.
      expect((await api('GET', '/projects')).status).toBe(200);
      expect((await api('GET', `/projects/${pid}`)).status).toBe(200);
      expect((await api('GET', `/projects/${FOREIGN_PROJECT_ID}`)).status).toBe(403);
      expect((await api('GET', '/projects/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect(
        (await api('GET', `/projects/${pid}/devices`, undefined, { token: null })).status,
      ).toBe(401);

      // Lookups.
      const metros = await api('GET', '/locations/metros');
      expect(metros.status).toBe(200);
      expect((await api('GET', `/locations/metros/${metros.body.metros[0].id}`)).status).toBe(200);
      expect(
        (await api('GET', '/locations/metros/00000000-0000-4000-8000-000000000000')).status,
      ).toBe(404);
      expect((await api('GET', '/plans')).status).toBe(200);
      expect((await api('GET', '/operating-systems')).status).toBe(200);
      expect((await api('GET', '/capacity/metros')).status).toBe(200);
      const cap = await api('POST', '/capacity/metros', {
        servers: [
          { metro: 'sv', plan: 'c3.small.x86', quantity: 3 },
          { metro: 'sg', plan: 's3.xlarge.x86', quantity: '1' },
        ],
      });
      expect(cap.status).toBe(200);
      expect(
        (
          await api('POST', '/capacity/metros', {
            servers: [{ metro: 'zz', plan: 'x', quantity: 1 }],
          })
        ).status,
      ).toBe(422);

      // Devices: create (one failing), validation errors, list with pagination.
      await control.failProvisioning('contract-broken', 'Hardware failure: no disk found');
      const ids: string[] = [];
      for (const [i, extra] of [
        {},
        { plan: 'n3.xlarge.x86', hostname: 'contract-big' },
        { hostname: 'contract-broken' },
        { hostname: 'contract-locked', locked: true, userdata: '#cloud-config\n{}' },
      ].entries()) {
        const r = await api(
          'POST',
          `/projects/${pid}/devices`,
          deviceInput({ hostname: `contract-${i}`, ...extra }),
        );
        expect(r.status).toBe(201);
        ids.push(r.body.id);
      }
      expect(
        (await api('POST', `/projects/${pid}/devices`, deviceInput({ plan: 'nope' }))).status,
      ).toBe(422);
      expect(
        (await api('POST', `/projects/${FOREIGN_PROJECT_ID}/devices`, deviceInput())).status,
      ).toBe(403);
      expect((await api('GET', `/projects/${pid}/devices?per_page=2&page=2`)).status).toBe(200);
      expect((await api('GET', `/devices/${ids[0]}`)).status).toBe(200); // queued
      expect((await api('DELETE', `/devices/${ids[0]}`)).status).toBe(422); // provisioning
      expect((await api('POST', `/devices/${ids[0]}/actions`, { type: 'power_off' })).status).toBe(
        422,
      );
      await checkpoint();

      await control.advanceClock(1.5); // provisioning
      expect((await api('GET', `/devices/${ids[0]}`)).status).toBe(200);
      await checkpoint();

      await control.advanceClock(10); // active / failed
      for (const id of ids)
        expect((await api('GET', `/devices/${id}?include=project`)).status).toBe(200);
      await checkpoint();
      expect(
        (await api('GET', `/projects/${pid}/devices?per_page=3&tag=loko:cluster=test`)).status,
      ).toBe(200);
      expect((await api('GET', '/devices/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect(
        (await api('PUT', `/devices/${ids[0]}`, { description: 'updated', tags: ['a'] })).status,
      ).toBe(200);
      expect((await api('PUT', `/devices/${ids[0]}`, { hostname: 'bad_name!' })).status).toBe(422);
      expect((await api('GET', `/devices/${ids[3]}/userdata`)).status).toBe(200);
      expect((await api('POST', `/devices/${ids[0]}/actions`, { type: 'reboot' })).status).toBe(
        202,
      );
      expect((await api('POST', `/devices/${ids[1]}/actions`, { type: 'explode' })).status).toBe(
        422,
      );

      // IPs.
      const eip = await api('POST', `/projects/${pid}/ips`, {
        type: 'public_ipv4',
        metro: 'sv',
        quantity: 2,
        tags: ['loko:cluster=test'],
        details: 'control plane',
      });
      expect(eip.status).toBe(201);
      const gip = await api('POST', `/projects/${pid}/ips`, { type: 'global_ipv4', quantity: 1 });
      expect(gip.status).toBe(201);
      expect(
        (
          await api('POST', `/projects/${pid}/ips`, {
            type: 'public_ipv4',
            quantity: 3,
            metro: 'sv',
          })
        ).status,
      ).toBe(422);
      expect((await api('GET', `/projects/${pid}/ips?types=public_ipv4,global_ipv4`)).status).toBe(
        200,
      );
      expect((await api('GET', `/projects/${pid}/ips?include=assignments`)).status).toBe(200);
      const assign = await api('POST', `/devices/${ids[1]}/ips`, {
        address: `${eip.body.network}/32`,
      });
      expect(assign.status).toBe(201);
      expect((await api('POST', `/devices/${ids[1]}/ips`, { address: '10.0.0.1/32' })).status).toBe(
        422,
      );
      expect((await api('GET', `/devices/${ids[1]}/ips`)).status).toBe(200);
      await checkpoint();
      expect((await api('GET', `/ips/${eip.body.id}`)).status).toBe(200); // reservation
      await checkpoint();
      expect((await api('GET', `/ips/${assign.body.id}`)).status).toBe(200); // assignment
      await checkpoint();
      expect((await api('PATCH', `/ips/${eip.body.id}`, { details: 'renamed' })).status).toBe(200);
      expect((await api('DELETE', `/ips/${eip.body.id}`)).status).toBe(422); // still assigned
      expect((await api('DELETE', `/ips/${assign.body.id}`)).status).toBe(204);
      expect((await api('DELETE', `/ips/${eip.body.id}`)).status).toBe(204);
      expect((await api('GET', `/ips/${eip.body.id}`)).status).toBe(404);

      // Hardware reservations: list, get, a device on one (by UUID), next-available exhausted.
      const hwList = await api('GET', `/projects/${pid}/hardware-reservations?provisionable=only`);
      expect(hwList.status).toBe(200);
      const hw = (
        hwList.body.hardware_reservations as Array<{ id: string; plan: { slug: string } }>
      ).find((r) => r.plan.slug === 'm3.small.x86')!;
      expect((await api('GET', `/hardware-reservations/${hw.id}`)).status).toBe(200); // no device
      expect(
        (await api('GET', `/projects/${FOREIGN_PROJECT_ID}/hardware-reservations`)).status,
      ).toBe(403);
      expect(
        (await api('GET', '/hardware-reservations/00000000-0000-4000-8000-000000000000')).status,
      ).toBe(404);
      await checkpoint();
      const reserved = await api(
        'POST',
        `/projects/${pid}/devices`,
        deviceInput({
          hostname: 'contract-reserved',
          metro: 'da',
          plan: 'm3.small.x86',
          hardware_reservation_id: hw.id,
        }),
      );
      expect(reserved.status).toBe(201);
      expect(
        (
          await api(
            'POST',
            `/projects/${pid}/devices`,
            deviceInput({
              metro: 'da',
              plan: 'm3.small.x86',
              hardware_reservation_id: 'next-available',
            }),
          )
        ).status,
      ).toBe(422);
      await checkpoint();
      await control.advanceClock(5); // the reserved device is active
      expect(
        (await api('GET', `/devices/${reserved.body.id}?include=hardware_reservation`)).status,
      ).toBe(200);
      expect((await api('GET', `/hardware-reservations/${hw.id}?include=device`)).status).toBe(200);
      expect((await api('GET', `/projects/${pid}/hardware-reservations?per_page=2`)).status).toBe(
        200,
      );
      await checkpoint();
      expect((await api('GET', `/hardware-reservations/${hw.id}?include=project`)).status).toBe(
        200,
      );
      await checkpoint();

      // BGP.
      expect((await api('GET', `/projects/${pid}/bgp-config`)).status).toBe(200); // {}
      await checkpoint();
      expect(
        (
          await api('POST', `/projects/${pid}/bgp-configs`, {
            deployment_type: 'local',
            asn: 65000,
          })
        ).status,
      ).toBe(204);
      expect(
        (
          await api('POST', `/projects/${pid}/bgp-configs`, {
            deployment_type: 'local',
            asn: 65000,
          })
        ).status,
      ).toBe(422);
      expect((await api('GET', `/projects/${pid}/bgp-config`)).status).toBe(200);

      // Delete.
      expect((await api('DELETE', `/devices/${ids[3]}`)).status).toBe(422); // locked
      expect((await api('DELETE', `/devices/${ids[1]}`)).status).toBe(204);
      expect((await api('DELETE', `/devices/${ids[2]}`)).status).toBe(204); // failed devices can go
      expect((await api('DELETE', `/devices/${reserved.body.id}`)).status).toBe(204);
      await control.advanceClock(10);
      expect((await api('GET', `/devices/${ids[1]}`)).status).toBe(404);
      const freed = await api('GET', `/hardware-reservations/${hw.id}`);
      expect(freed.body.provisionable).toBe(true);
      await checkpoint();

      const problems = validateSamples(contract, samples);
      expect(problems, problems.join('\n')).toEqual([]);

      // Every (method, route) the flow requested has a response that was validated, and the
      // flow asked nothing the emulator does not serve.
      const requested = new Set(
        summaries.flatMap((sum) => sum.routes.map((r) => `${r.method} ${r.route}`)),
      );
      const covered = new Set(samples.map((s) => `${s.method} ${s.route}`));
      expect([...requested].filter((k) => !covered.has(k))).toEqual([]);
      expect([...requested].filter((k) => k.includes('(unmatched)'))).toEqual([]);
      expect(requested.size).toBeGreaterThanOrEqual(20);
    });
  });
}
