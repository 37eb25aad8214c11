/**
 * Project API keys over HTTP against the emulator: the routes' shapes and status codes (the run's
 * contract check validates every answer against the OpenAPI spec), a created key authenticating
 * requests within its project only, the typed client (src/metal/api-keys.ts), and the platform's
 * ensureClusterApiKey and destroy phase on top of it.
 */
import { describe, expect, it } from 'vitest';
import { FOREIGN_PROJECT_ID } from '../../../src/emulator/index.js';
import {
  apiKeysApi,
  createMetalClient,
  createProjectApiKey,
  deleteApiKey,
  listProjectApiKeys,
  MetalApiError,
} from '../../../src/metal/index.js';
import { ensureClusterApiKey } from '../../../src/platforms/equinixmetal/api-key.js';
import {
  createDestroyContext,
  destroyPhases,
  inventoryPhases,
} from '../../../src/platforms/equinixmetal/destroy.js';
import { apiKeyExecutor, createExecutor } from '../../../src/platforms/equinixmetal/executor.js';
import { createPlainRunner } from '../../../src/tasks/phase.js';
import { useEmulator } from '../../harness/emulator.js';

const UNKNOWN = '3f1f6b1e-2b0c-4f5e-9d8a-1c2b3a4d5e6f';

describe('project API keys (emulator over HTTP)', () => {
  const emu = useEmulator();

  it('creates (201 AuthToken with a token), lists and deletes (204, then 404)', async () => {
    const { api, projectId } = emu();
    const created = await api('POST', `/projects/${projectId}/api-keys`, {
      description: 'loko:cluster=k1',
      read_only: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      description: 'loko:cluster=k1',
      read_only: false,
      project: { href: `/metal/v1/projects/${projectId}` },
    });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof created.body.token).toBe('string');
    expect(created.body.token.length).toBeGreaterThanOrEqual(20);
    expect(created.body.token).not.toBe(emu().token);

    const list = await api('GET', `/projects/${projectId}/api-keys`);
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['api_keys']);
    expect(list.body.api_keys).toContainEqual(created.body);

    const withProject = await api('GET', `/projects/${projectId}/api-keys?include=project`);
    const embedded = withProject.body.api_keys.find(
      (k: { id: string }) => k.id === created.body.id,
    );
    expect(embedded.project).toMatchObject({ id: projectId, name: expect.any(String) });

    const del = await api('DELETE', `/api-keys/${created.body.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    const again = await api('DELETE', `/api-keys/${created.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ errors: ['Not found'] });
    const after = await api('GET', `/projects/${projectId}/api-keys`);
    expect(after.body.api_keys.map((k: { id: string }) => k.id)).not.toContain(created.body.id);
  });

  it('answers 404 for unknown and foreign projects, 422 for bad input, 401 without a token', async () => {
    const { api, projectId } = emu();
    expect((await api('GET', `/projects/${UNKNOWN}/api-keys`)).status).toBe(404);
    expect((await api('POST', `/projects/${FOREIGN_PROJECT_ID}/api-keys`, {})).status).toBe(404);
    expect((await api('GET', `/projects/${FOREIGN_PROJECT_ID}/api-keys`)).status).toBe(404);
    expect((await api('DELETE', '/api-keys/not-a-uuid')).status).toBe(404);

    const bad = await api('POST', `/projects/${projectId}/api-keys`, {
      description: 7,
      read_only: 'no',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/description/),
        expect.stringMatching(/read_only/),
      ]),
    );
    const notObject = await api('POST', `/projects/${projectId}/api-keys`, ['x']);
    expect(notObject.status).toBe(422);

    const anon = await api('GET', `/projects/${projectId}/api-keys`, undefined, { token: null });
    expect(anon.status).toBe(401);
    expect(typeof anon.body.error).toBe('string');
  });

  it("a key's token authenticates requests in its project, and stops working once deleted", async () => {
    const { api, projectId } = emu();
    const key = (await api('POST', `/projects/${projectId}/api-keys`, { description: 'ccm' })).body;
    const as = { token: key.token as string };
    expect((await api('GET', `/projects/${projectId}/ips`, undefined, as)).status).toBe(200);
    expect((await api('GET', `/projects/${projectId}/bgp-config`, undefined, as)).status).toBe(200);
    expect((await api('GET', '/locations/metros', undefined, as)).status).toBe(200);
    // Writes too (CPEM reserves Elastic IPs for Services).
    const eip = await api(
      'POST',
      `/projects/${projectId}/ips`,
      { type: 'public_ipv4', quantity: 1, metro: 'sv', tags: ['svc'] },
      as,
    );
    expect(eip.status).toBe(201);
    expect((await api('GET', `/ips/${eip.body.id}`, undefined, as)).status).toBe(200);
    // Not another project (a foreign project the user token cannot see either).
    const foreign = await api('GET', `/projects/${FOREIGN_PROJECT_ID}/devices`, undefined, as);
    expect(foreign.status).toBe(401);
    expect(foreign.body).toEqual({ error: 'This API key is not authorized for this project' });

    expect((await api('DELETE', `/ips/${eip.body.id}`, undefined, as)).status).toBe(204);
    expect((await api('DELETE', `/api-keys/${key.id}`)).status).toBe(204);
    const gone = await api('GET', `/projects/${projectId}/ips`, undefined, as);
    expect(gone.status).toBe(401);
    expect(gone.body).toEqual({ error: 'Invalid authentication token' });
  });

  it('a read-only key reads but may not write', async () => {
    const { api, projectId } = emu();
    const key = (
      await api('POST', `/projects/${projectId}/api-keys`, { description: 'ro', read_only: true })
    ).body;
    expect(key.read_only).toBe(true);
    const as = { token: key.token as string };
    expect((await api('GET', `/projects/${projectId}/ips`, undefined, as)).status).toBe(200);
    const write = await api(
      'POST',
      `/projects/${projectId}/ips`,
      { type: 'public_ipv4', quantity: 1, metro: 'sv' },
      as,
    );
    expect(write.status).toBe(401);
    expect(write.body).toEqual({ error: 'This API key is read-only' });
    expect((await api('DELETE', `/api-keys/${key.id}`)).status).toBe(204);
  });

  it('the typed client lists, creates and deletes; errors are MetalApiError', async () => {
    const { projectId } = emu();
    const t = createMetalClient({ baseUrl: emu().url, token: emu().token }).transport;
    const k = await createProjectApiKey(t, projectId, { description: 'typed', read_only: false });
    expect(k.token).toBeTruthy();
    expect((await listProjectApiKeys(t, projectId)).map((x) => x.id)).toContain(k.id);
    expect(await deleteApiKey(t, k.id)).toBe('deleted');
    expect(await deleteApiKey(t, k.id)).toBe('absent');
    const err = await listProjectApiKeys(t, UNKNOWN).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetalApiError);
    expect((err as MetalApiError).status).toBe(404);
  });

  it('ensureClusterApiKey creates once, reuses on re-runs, and destroy deletes it', async () => {
    const { projectId } = emu();
    const client = createMetalClient({ baseUrl: emu().url, token: emu().token });
    const keys = apiKeysApi(client.transport);
    // Through the platform executor, as cluster apply runs it.
    const ensure = (dryRun = false) => {
      const executor = createExecutor({ api: client, dryRun });
      return ensureClusterApiKey({
        api: client,
        executor: apiKeyExecutor(executor),
        projectId,
        clusterName: 'ens',
      }).then((r) => ({ ...r, recorded: executor.recorded }));
    };
    const dry = await ensure(true);
    expect(dry.recorded).toEqual([
      { kind: 'create-api-key', projectId, description: 'loko:cluster=ens' },
    ]);
    expect(
      (await keys.listProjectApiKeys(projectId)).filter(
        (k) => k.description === 'loko:cluster=ens',
      ),
    ).toEqual([]);

    const first = await ensure();
    expect(first.created).toBe(true);
    const second = await ensure();
    expect(second).toMatchObject({ id: first.id, token: first.token, created: false });
    expect(second.recorded).toEqual([]);
    // The token works against the API, in the project.
    const asKey = createMetalClient({ baseUrl: emu().url, token: first.token });
    expect(Array.isArray(await asKey.listIPReservations(projectId))).toBe(true);

    // destroy: the key is in the inventory and deleted; a second destroy finds nothing.
    const runner = createPlainRunner();
    const signal = new AbortController().signal;
    const destroyCtx = () => {
      const executor = createExecutor({ api: client });
      return createDestroyContext({
        api: client,
        executor,
        clusterName: 'ens',
        projectId,
        apiKeys: { api: client, executor: apiKeyExecutor(executor) },
        options: { poll: { intervalMs: 10, maxIntervalMs: 50, factor: 1.5, timeoutMs: 5_000 } },
      });
    };
    const d1 = destroyCtx();
    await runner.run([...inventoryPhases, ...destroyPhases], d1, signal);
    expect(d1.inventory?.apiKeys).toEqual([{ id: first.id, description: 'loko:cluster=ens' }]);
    expect(d1.leftovers?.apiKeys).toEqual([]);
    const d2 = destroyCtx();
    await runner.run(inventoryPhases, d2, signal);
    expect(d2.inventory?.apiKeys).toEqual([]);
    const err = await asKey.listIPReservations(projectId).catch((e: unknown) => e);
    expect((err as MetalApiError).status).toBe(401);
  });
});
