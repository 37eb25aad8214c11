/**
 * ensureClusterApiKey against an in-memory ApiKeysApi: find by description, create once, keep the
 * oldest of duplicates, replace keys CPEM cannot use, adopt after an uncertain create, and a dry
 * run that records exactly the writes an apply makes.
 */
import { describe, expect, it } from 'vitest';
import type { ApiKeysApi, AuthToken, AuthTokenInput } from '../../../../src/metal/api-keys.js';
import {
  apiKeyMutationCall,
  dryRunApiKeyResult,
  performApiKeyMutation,
  type ApiKeyMutation,
  describeApiKeyMutation,
  ensureClusterApiKey,
  findClusterApiKey,
} from '../../../../src/platforms/equinixmetal/api-key.js';

const P = 'proj';

class FakeKeys implements ApiKeysApi {
  keys: AuthToken[] = [];
  calls: string[] = [];
  n = 0;
  /** Makes the next create fail after (or instead of) creating. */
  createFault?: { afterCreate: boolean; err: Error };

  async listProjectApiKeys(projectId: string): Promise<AuthToken[]> {
    this.calls.push(`list ${projectId}`);
    return this.keys.map((k) => ({ ...k }));
  }
  async createProjectApiKey(projectId: string, input: AuthTokenInput): Promise<AuthToken> {
    this.calls.push(`create ${projectId} ${input.description} ro=${input.read_only}`);
    const fault = this.createFault;
    this.createFault = undefined;
    if (fault && !fault.afterCreate) throw fault.err;
    const k = this.add(input.description ?? '', `tok-${this.n + 1}`);
    if (fault) throw fault.err;
    return { ...k };
  }
  async deleteApiKey(id: string): Promise<'deleted' | 'absent'> {
    this.calls.push(`delete ${id}`);
    const before = this.keys.length;
    this.keys = this.keys.filter((k) => k.id !== id);
    return before === this.keys.length ? 'absent' : 'deleted';
  }
  add(description: string, token?: string, extra: Partial<AuthToken> = {}): AuthToken {
    this.n++;
    const k: AuthToken = {
      id: `id-${this.n}`,
      description,
      read_only: false,
      created_at: `2026-01-0${this.n}T00:00:00Z`,
      ...(token !== undefined ? { token } : {}),
      ...extra,
    };
    this.keys.push(k);
    return k;
  }
}

/** An error the platform classifies as uncertain (5xx), like MetalApiError. */
function unavailable(): Error {
  return Object.assign(new Error('503 Service Unavailable'), { status: 503 });
}

/**
 * The platform executor's contract over the fake keys alone: journal every mutation, answer a dry
 * run without calling, else perform it as the executor does (performApiKeyMutation).
 */
function keyExecutor(api: FakeKeys, dryRun: boolean) {
  const recorded: ApiKeyMutation[] = [];
  return {
    dryRun,
    recorded,
    execute: (m: ApiKeyMutation) => {
      recorded.push(m);
      return dryRun ? Promise.resolve(dryRunApiKeyResult(m)) : performApiKeyMutation(api, m);
    },
  };
}

async function ensure(api: FakeKeys, dryRun = false) {
  const executor = keyExecutor(api, dryRun);
  const key = await ensureClusterApiKey({ api, executor, projectId: P, clusterName: 'demo' });
  return { key, recorded: executor.recorded };
}

describe('ensureClusterApiKey', () => {
  it('creates a read-write key described loko:cluster=<name>, then reuses it', async () => {
    const api = new FakeKeys();
    api.add('someone else', 'other');
    const first = await ensure(api);
    expect(first.key).toEqual({ id: 'id-2', token: 'tok-2', created: true, deleted: [] });
    expect(api.calls).toEqual(['list proj', 'create proj loko:cluster=demo ro=false']);
    const again = await ensure(api);
    expect(again.key).toEqual({ id: 'id-2', token: 'tok-2', created: false, deleted: [] });
    expect(again.recorded).toEqual([]);
    expect(api.keys.map((k) => k.description)).toEqual(['someone else', 'loko:cluster=demo']);
  });

  it('ignores keys whose description only resembles the cluster', async () => {
    const api = new FakeKeys();
    api.add('loko:cluster=demo2', 'x');
    api.add('loko:cluster=dem', 'y');
    const { key } = await ensure(api);
    expect(key.created).toBe(true);
    expect(api.keys).toHaveLength(3);
  });

  it('keeps the oldest of several usable keys and deletes the others', async () => {
    const api = new FakeKeys();
    api.add('loko:cluster=demo', 'old', { created_at: '2025-01-01T00:00:00Z' });
    api.add('loko:cluster=demo', 'new', { created_at: '2026-01-01T00:00:00Z' });
    const { key, recorded } = await ensure(api);
    expect(key).toMatchObject({ id: 'id-1', token: 'old', created: false });
    expect(recorded).toEqual([
      { kind: 'delete-api-key', id: 'id-2', description: 'loko:cluster=demo' },
    ]);
    expect(api.keys.map((k) => k.id)).toEqual(['id-1']);
  });

  it('replaces keys CPEM cannot use (read-only, or listed without a token): the new one first', async () => {
    const api = new FakeKeys();
    api.add('loko:cluster=demo', 'ro', { read_only: true });
    api.add('loko:cluster=demo', undefined);
    api.add('loko:cluster=demo', '');
    const { key, recorded } = await ensure(api);
    expect(recorded.map((m) => m.kind)).toEqual([
      'create-api-key',
      'delete-api-key',
      'delete-api-key',
      'delete-api-key',
    ]);
    expect(key).toMatchObject({ token: 'tok-4', created: true });
    expect(key.deleted.map((d) => d.id)).toEqual(['id-1', 'id-2', 'id-3']);
    expect(api.keys.map((k) => k.id)).toEqual(['id-4']);
  });

  it('after an uncertain create answer it re-lists and adopts, never creating twice', async () => {
    const api = new FakeKeys();
    api.createFault = { afterCreate: true, err: unavailable() };
    const { key } = await ensure(api);
    expect(key).toMatchObject({ id: 'id-1', token: 'tok-1', created: true });
    expect(api.calls.filter((c) => c.startsWith('create'))).toHaveLength(1);
    expect(api.keys).toHaveLength(1);
  });

  it('creates again when the uncertain create made nothing; a refusal is not retried', async () => {
    const api = new FakeKeys();
    api.createFault = { afterCreate: false, err: unavailable() };
    const { key } = await ensure(api);
    expect(key.token).toBe('tok-1');
    expect(api.calls.filter((c) => c.startsWith('create'))).toHaveLength(2);

    const refused = new FakeKeys();
    refused.createFault = {
      afterCreate: false,
      err: Object.assign(new Error('401'), { status: 401 }),
    };
    await expect(ensure(refused)).rejects.toMatchObject({ status: 401 });
    expect(refused.calls.filter((c) => c.startsWith('create'))).toHaveLength(1);
  });

  it('a dry run records the same writes as the apply that follows, and writes nothing', async () => {
    const seed = (api: FakeKeys) => {
      api.add('loko:cluster=demo', 'a', { created_at: '2025-01-01T00:00:00Z' });
      api.add('loko:cluster=demo', undefined, { created_at: '2024-01-01T00:00:00Z' });
    };
    const dryApi = new FakeKeys();
    seed(dryApi);
    const dry = await ensure(dryApi, true);
    expect(dryApi.calls).toEqual(['list proj']);
    expect(dryApi.keys).toHaveLength(2);
    const liveApi = new FakeKeys();
    seed(liveApi);
    const live = await ensure(liveApi);
    expect(live.recorded).toEqual(dry.recorded);
    expect(dry.recorded.map(describeApiKeyMutation)).toEqual([
      `delete the cluster's project API key "loko:cluster=demo" (id-2)`,
    ]);

    const empty = await ensure(new FakeKeys(), true);
    expect(empty.key.created).toBe(true);
    expect(empty.recorded.map(apiKeyMutationCall)).toEqual(['POST /projects/proj/api-keys']);
    expect(empty.recorded.map(describeApiKeyMutation).join()).not.toContain('tok');
  });
});

describe('findClusterApiKey', () => {
  it('reads the key ensure would keep, and writes nothing', async () => {
    const api = new FakeKeys();
    expect(await findClusterApiKey({ api, projectId: P, clusterName: 'demo' })).toBeUndefined();
    api.add('loko:cluster=demo', undefined, { created_at: '2024-01-01T00:00:00Z' });
    api.add('loko:cluster=demo', 'b', { created_at: '2026-01-01T00:00:00Z' });
    api.add('loko:cluster=demo', 'a', { created_at: '2025-01-01T00:00:00Z' });
    expect(await findClusterApiKey({ api, projectId: P, clusterName: 'demo' })).toEqual({
      id: 'id-3',
      token: 'a',
    });
    expect(api.calls).toEqual(['list proj', 'list proj']);
  });
});
