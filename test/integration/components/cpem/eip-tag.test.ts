/**
 * CPEM's `eipTag` against the emulator over HTTP: a control-plane Elastic IP reserved before loko
 * tagged it for the CCM is found by its old tags and given `loko:control-plane-endpoint=<cluster>`
 * with `PATCH /ips/{id}` through the executor (a dry run plans that write and sends nothing), never
 * reserved a second time; afterwards exactly one reservation of the project carries the tag, which
 * is how CPEM finds it (`GET /projects/{id}/ips?include=assignments`, match by tag).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMetalClient } from '../../../../src/metal/index.js';
import {
  createApplyContext,
  endpointReservePhase,
  endpointTagPhase,
  planPhases,
  type ApplyContext,
} from '../../../../src/platforms/equinixmetal/apply.js';
import { controlPlaneEipTag } from '../../../../src/platforms/equinixmetal/endpoint.js';
import { createExecutor } from '../../../../src/platforms/equinixmetal/executor.js';
import { createPlainRunner } from '../../../../src/tasks/phase.js';
import { useEmulator } from '../../../harness/emulator.js';
import { cluster, sources } from '../../../unit/platforms/fixtures.js';

const runner = createPlainRunner();
const signal = new AbortController().signal;
const poll = { intervalMs: 100, maxIntervalMs: 200, factor: 1.5, timeoutMs: 10_000 };

describe('control-plane EIP tag for CPEM (emulator over HTTP)', () => {
  const emu = useEmulator();
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  async function ctxFor(dryRun: boolean): Promise<ApplyContext> {
    const api = createMetalClient({ baseUrl: emu().url, token: emu().token });
    const assetDir = await mkdtemp(path.join(os.tmpdir(), 'loko-cpem-eip-'));
    dirs.push(assetDir);
    return createApplyContext({
      api,
      cluster: { ...cluster({ workerPools: [] }), projectId: emu().projectId, assetDir },
      sources: sources({ 'cluster.metro': 3 }),
      executor: createExecutor({ api, dryRun }),
      options: {
        poll,
        kubePoll: poll,
        writeSummary: false,
        allowReplace: false,
        kubernetes: { mode: 'skip', reason: 'machines only (test)', apiExpected: false },
      },
    });
  }
  const phases = [...planPhases, endpointReservePhase, endpointTagPhase];

  it('tags an old reservation once through the executor; CPEM finds exactly it by the tag', async () => {
    const { api, projectId } = emu();
    const legacy = await api('POST', `/projects/${projectId}/ips`, {
      type: 'public_ipv4',
      quantity: 1,
      metro: 'sv',
      tags: ['loko:cluster=demo', 'loko:role=control-plane-endpoint'],
    });
    expect(legacy.status).toBe(201);
    // Another cluster's endpoint, to show the tag is unique to this one.
    await api('POST', `/projects/${projectId}/ips`, {
      type: 'public_ipv4',
      quantity: 1,
      metro: 'sv',
      tags: ['loko:cluster=other', 'loko:role=control-plane-endpoint', controlPlaneEipTag('other')],
    });

    const dry = await ctxFor(true);
    await runner.run(phases, dry, signal);
    expect(dry.executor.recorded).toEqual([
      {
        kind: 'tag-ip',
        id: legacy.body.id,
        tags: [
          'loko:cluster=demo',
          'loko:role=control-plane-endpoint',
          'loko:control-plane-endpoint=demo',
        ],
        label: `${legacy.body.address}/32`,
      },
    ]);
    expect((await api('GET', `/ips/${legacy.body.id}`)).body.tags).not.toContain(
      controlPlaneEipTag('demo'),
    );

    const live = await ctxFor(false);
    await runner.run(phases, live, signal);
    expect(live.executor.recorded).toEqual(dry.executor.recorded);
    expect((await api('GET', `/ips/${legacy.body.id}`)).body.tags).toContain(
      controlPlaneEipTag('demo'),
    );

    const again = await ctxFor(false);
    await runner.run(phases, again, signal);
    expect(again.executor.recorded).toEqual([]);

    // What CPEM does with eipTag: list with assignments, keep the reservations carrying the tag.
    const all = await api('GET', `/projects/${projectId}/ips?include=assignments`);
    const tagged = (all.body.ip_addresses as { id: string; tags: string[] }[]).filter((r) =>
      r.tags.includes(controlPlaneEipTag('demo')),
    );
    expect(tagged.map((r) => r.id)).toEqual([legacy.body.id]);
  });
});
