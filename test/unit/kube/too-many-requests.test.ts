/**
 * A request the API answers 429 was not processed (API priority and fairness, or a custom
 * resource's storage "(re)initializing" after its CRD changed): the client sends it again after
 * a pause, and gives up with the API's error after a bounded number of attempts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient } from '../../../src/kube/client.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import { KubeConfig } from '@kubernetes/client-node';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A plain-HTTP API serving core/v1 discovery and answering `busy` 429s before each list. */
async function api(busy: number): Promise<{ client: KubeClient; lists: () => number }> {
  let lists = 0;
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/api/v1') {
      res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['list'] }],
        }),
      );
      return;
    }
    lists++;
    if (lists <= busy) {
      res.statusCode = 429;
      res.setHeader('retry-after', '1');
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'storage is (re)initializing',
          reason: 'TooManyRequests',
          code: 429,
        }),
      );
      return;
    }
    res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', items: [], metadata: {} }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const port = (server!.address() as AddressInfo).port;
  // Plain HTTP on loopback (a test double, not a cluster): the library needs skip-verify for it,
  // which loko's own loader refuses, so the library loads it directly.
  const kc = new KubeConfig();
  kc.loadFromString(
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{ name: c, cluster: { server: "http://127.0.0.1:' +
        port +
        '", insecure-skip-tls-verify: true } }]',
      'users: [{ name: u, user: { token: t } }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    ].join('\n'),
  );
  return { client: new KubeClient(kc), lists: () => lists };
}

describe('KubeClient and 429', () => {
  it('sends a request again after Retry-After until it is served', async () => {
    const { client, lists } = await api(2);
    await expect(client.list('v1', 'ConfigMap', { namespace: 'x' })).resolves.toEqual([]);
    expect(lists()).toBe(3);
  });

  it('gives up after a bounded number of attempts with the API error', async () => {
    const { client, lists } = await api(100);
    const err = await client.list('v1', 'ConfigMap', { namespace: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(429);
    expect(lists()).toBe(8);
  }, 30_000);
});
