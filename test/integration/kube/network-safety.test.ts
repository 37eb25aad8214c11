/**
 * Network safety of the harness (docs/testing.md): no socket of etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler or kwok may point outside 127.0.0.0/8, and nothing may
 * listen on a non-loopback address. The globalSetup samples their sockets every 250 ms for the
 * whole run (and fails the run at teardown on a violation); this test checks the samples so far
 * plus a fresh look, after making the apiserver call a webhook.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { applyObjects, WebhookUnavailableError } from '../../../src/kube/index.js';
import { describeKube, harnessStateFile, useKube, useNamespace } from '../../harness/kube/index.js';
import { inspectProcesses, processSockets } from '../../harness/kube/sockets.js';
import { readState } from '../../harness/kube/state.js';

describeKube('network safety of the test control plane', () => {
  const kube = useKube();
  const ns = useNamespace(kube, 'netsafe');

  it('calls webhooks on endpoint addresses, never a cluster IP; retries then names the webhook', async () => {
    const { client } = kube();
    const n = ns();
    const webhook = `deny.t${randomBytes(3).toString('hex')}.loko.test`;
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhook },
      webhooks: [
        {
          name: webhook,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 2,
          // Only this test's namespace and ConfigMaps: other suites run in parallel.
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': n } },
          rules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['configmaps'],
            },
          ],
          clientConfig: {
            service: { namespace: n, name: 'webhook', port: 443, path: '/validate' },
          },
        },
      ],
    };
    try {
      await applyObjects(client, [
        // A service whose selector matches no pod: it has a cluster IP but no endpoints.
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'webhook', namespace: n },
          spec: { selector: { app: 'nobody' }, ports: [{ port: 443, targetPort: 9443 }] },
        },
        config,
      ]);
      const retries: string[] = [];
      const t0 = Date.now();
      const err = await applyObjects(
        client,
        [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'guarded', namespace: n } }],
        {
          webhookTimeoutMs: 2500,
          onProgress: (e) => e.type === 'retrying' && retries.push(e.webhook),
        },
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebhookUnavailableError);
      const w = err as WebhookUnavailableError;
      expect(w.webhook).toBe(webhook);
      expect(w.message).toContain(`webhook "${webhook}" still unavailable after`);
      // With --enable-aggregator-routing the apiserver resolved the service to its (absent)
      // endpoints; it never dialled the cluster IP (that would be "connection refused").
      expect(w.apiMessage).toMatch(/no endpoints available for service/);
      expect(retries.length).toBeGreaterThan(0);
      expect(new Set(retries)).toEqual(new Set([webhook]));
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      await client.delete({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        name: webhook,
      });
    }
  });

  it('no harness process has a socket outside 127.0.0.0/8', async () => {
    const state = readState(harnessStateFile());
    const components = state.components ?? [];
    const expected = state.controllers
      ? ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']
      : ['etcd', 'kube-apiserver'];
    expect(components.map((c) => c.name)).toEqual(expected);

    // The check sees real sockets: every component listens, on loopback, and the apiserver
    // holds established connections (to etcd at least).
    for (const c of components) {
      const sockets = processSockets(c.pid);
      expect(
        sockets.some((s) => s.state === 'LISTEN'),
        `${c.name} listens`,
      ).toBe(true);
    }
    const api = components.find((c) => c.name === 'kube-apiserver')!;
    expect(processSockets(api.pid).some((s) => s.state === 'ESTABLISHED')).toBe(true);

    const now = inspectProcesses(components);
    expect(now.sockets).toBeGreaterThan(0);
    expect(now.violations.map((v) => `${v.process}: ${v.text}`)).toEqual([]);

    // What the background sampler saw since the control plane became ready.
    expect(state.network?.samples ?? 0).toBeGreaterThan(0);
    expect((state.network?.violations ?? []).map((v) => `${v.process}: ${v.text}`)).toEqual([]);
  });
});
