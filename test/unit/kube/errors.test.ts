import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  FieldConflictError,
  KubeApiError,
  KubeConnectionError,
  KubeTimeoutError,
  retryTransient,
  toKubeError,
  transientWebhook,
  UnknownKindError,
  waitUntil,
  WebhookUnavailableError,
} from '../../../src/kube/index.js';

const id = { kind: 'ConfigMap', name: 'settings', namespace: 'apps' };
const SERVER = 'https://127.0.0.1:6443';
const apiErr = (code: number, body: unknown) =>
  new ApiException(code, 'Unsuccessful HTTP Request', body, {});

describe('toKubeError', () => {
  it('maps a Status to KubeApiError with status, reason and the object', () => {
    const e = toKubeError(
      apiErr(422, {
        kind: 'Status',
        reason: 'Invalid',
        message: 'ConfigMap "settings" is invalid: data: Invalid value',
      }),
      'apply',
      id,
      SERVER,
    );
    expect(e).toBeInstanceOf(KubeApiError);
    const k = e as KubeApiError;
    expect([k.status, k.reason, k.kind, k.objectName, k.namespace, k.name]).toEqual([
      422,
      'Invalid',
      'ConfigMap',
      'settings',
      'apps',
      'KubeApiError',
    ]);
    expect(k.message).toBe(
      'apply ConfigMap apps/settings: ConfigMap "settings" is invalid: data: Invalid value (HTTP 422 Invalid)',
    );
    expect(k.object).toEqual(id);
  });

  it('maps a 409 with FieldManagerConflict causes to FieldConflictError listing fields and managers', () => {
    const e = toKubeError(
      apiErr(409, {
        kind: 'Status',
        reason: 'Conflict',
        message:
          'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using v1:\n- .data.color\n- .data.size',
        details: {
          causes: [
            {
              reason: 'FieldManagerConflict',
              message: 'conflict with "kubectl-edit" using v1',
              field: '.data.color',
            },
            { reason: 'FieldManagerConflict', message: 'conflict with "helm": .data.size' },
          ],
        },
      }),
      'apply',
      id,
      SERVER,
    ) as FieldConflictError;
    expect(e).toBeInstanceOf(FieldConflictError);
    expect(e.name).toBe('FieldConflictError');
    expect(e.conflicts.map((c) => [c.field, c.manager])).toEqual([
      ['.data.color', 'kubectl-edit'],
      ['.data.size', 'helm'],
    ]);
    expect(e.message).toContain(
      '.data.color (owned by "kubectl-edit"), .data.size (owned by "helm")',
    );
    expect(e.apiMessage).toMatch(/^Apply failed with 2 conflicts/);
  });

  it('keeps a plain 409 (optimistic concurrency) a KubeApiError', () => {
    const e = toKubeError(
      apiErr(409, { reason: 'Conflict', message: 'the object has been modified' }),
      'apply',
      id,
      SERVER,
    );
    expect(e).toBeInstanceOf(KubeApiError);
    expect(e).not.toBeInstanceOf(FieldConflictError);
  });

  it('maps discovery misses to UnknownKindError', () => {
    const notServed = apiErr(404, {
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });
    notServed.message = `Failed to fetch resource metadata for example.com/v1/Widget: ${notServed.message}`;
    expect(
      toKubeError(notServed, 'apply', { kind: 'Widget', name: 'w' }, SERVER, 'example.com/v1'),
    ).toBeInstanceOf(UnknownKindError);
    const unknown = toKubeError(
      new Error('Unrecognized API version and kind: v1 Widget'),
      'apply',
      id,
      SERVER,
    );
    expect(unknown).toBeInstanceOf(UnknownKindError);
    expect(unknown.message).toMatch(/does not serve kind Widget in v1/);
  });

  it('maps network failures and timeouts to KubeConnectionError naming the server', () => {
    const refused = Object.assign(
      new Error('request to https://127.0.0.1:6443/api failed, reason: connect ECONNREFUSED'),
      {
        name: 'FetchError',
        code: 'ECONNREFUSED',
      },
    );
    const e = toKubeError(refused, 'get', id, SERVER) as KubeConnectionError;
    expect(e).toBeInstanceOf(KubeConnectionError);
    expect(e.code).toBe('ECONNREFUSED');
    expect(e.message).toMatch(/^Kubernetes API at https:\/\/127\.0\.0\.1:6443 unreachable: /);
    const timeout = toKubeError(
      Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }),
      'get',
      id,
      SERVER,
    );
    expect(timeout).toBeInstanceOf(KubeConnectionError);
    expect((timeout as KubeConnectionError).code).toBe('ETIMEDOUT');
  });
});

const webhookError = (tail: string) =>
  new KubeApiError({
    status: 500,
    reason: 'InternalError',
    message: `Internal error occurred: failed calling webhook "vpool.metallb.io": failed to call webhook: Post "https://metallb-webhook-service.metallb-system.svc:443/validate?timeout=10s": ${tail}`,
    kind: 'IPAddressPool',
    name: 'public',
    namespace: 'metallb-system',
    verb: 'apply',
  });

describe('transient webhook failures', () => {
  it('recognises unreachable webhooks and names them', () => {
    expect(
      transientWebhook(
        webhookError('no endpoints available for service "metallb-webhook-service"'),
      ),
    ).toBe('vpool.metallb.io');
    expect(
      transientWebhook(webhookError('dial tcp 127.0.0.5:9443: connect: connection refused')),
    ).toBe('vpool.metallb.io');
    const conversion = new KubeApiError({
      status: 500,
      message:
        'conversion webhook for cert-manager.io/v1, Kind=Certificate failed: Post "https://x": dial tcp 127.0.0.9:443: connect: connection refused',
      kind: 'Certificate',
      name: 'c',
    });
    expect(transientWebhook(conversion)).toBe(
      'conversion webhook for cert-manager.io/v1, Kind=Certificate',
    );
  });

  it('does not retry anything else', () => {
    expect(
      transientWebhook(webhookError('x509: certificate signed by unknown authority')),
    ).toBeUndefined();
    expect(
      transientWebhook(
        new KubeApiError({
          status: 500,
          message: 'etcdserver: request timed out',
          kind: 'ConfigMap',
          name: 'x',
        }),
      ),
    ).toBeUndefined();
    expect(
      transientWebhook(
        new KubeApiError({
          status: 400,
          message: 'failed calling webhook "a": connection refused',
          kind: 'ConfigMap',
          name: 'x',
        }),
      ),
    ).toBeUndefined();
    expect(transientWebhook(new Error('connection refused'))).toBeUndefined();
  });

  it('retries until the webhook answers', async () => {
    let calls = 0;
    const seen: string[] = [];
    const result = await retryTransient(
      async () => {
        if (++calls < 3) throw webhookError('connect: connection refused');
        return 'ok';
      },
      { intervalMs: 1, onRetry: (w) => seen.push(w) },
    );
    expect(result).toBe('ok');
    expect(seen).toEqual(['vpool.metallb.io', 'vpool.metallb.io']);
  });

  it('gives up with WebhookUnavailableError naming the webhook and the object', async () => {
    const err = await retryTransient(
      async () => {
        throw webhookError('no endpoints available for service "metallb-webhook-service"');
      },
      { timeoutMs: 30, intervalMs: 5 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookUnavailableError);
    const w = err as WebhookUnavailableError;
    expect(w.webhook).toBe('vpool.metallb.io');
    expect(w.message).toMatch(
      /^apply IPAddressPool metallb-system\/public: webhook "vpool\.metallb\.io" still unavailable after \d+s: /,
    );
    expect(w.apiMessage).toMatch(/no endpoints available/);
  });

  it('throws other errors at once', async () => {
    let calls = 0;
    const boom = new KubeApiError({
      status: 403,
      message: 'forbidden',
      kind: 'ConfigMap',
      name: 'x',
    });
    await expect(
      retryTransient(async () => {
        calls++;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
  });
});

describe('waitUntil', () => {
  it('returns the value once done', async () => {
    let n = 0;
    await expect(
      waitUntil(
        'x',
        async () => (++n < 3 ? { done: false, state: `n=${n}` } : { done: true, value: n }),
        {
          timeoutMs: 1000,
          intervalMs: 1,
        },
      ),
    ).resolves.toBe(3);
  });
  it('times out with the last state', async () => {
    const err = await waitUntil(
      'the thing',
      async () => ({ done: false, state: 'still cooking' }),
      {
        timeoutMs: 20,
        intervalMs: 5,
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTimeoutError);
    expect((err as KubeTimeoutError).message).toBe(
      'timed out after 0s waiting for the thing: still cooking',
    );
    expect((err as KubeTimeoutError).lastState).toBe('still cooking');
  });
  it('stops on abort', async () => {
    const ac = new AbortController();
    const p = waitUntil('x', async () => ({ done: false, state: '' }), {
      timeoutMs: 10_000,
      signal: ac.signal,
    });
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});
