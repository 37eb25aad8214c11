/**
 * Rollout waiters against real controllers: kube-controller-manager creates the pods,
 * kube-scheduler binds them to the kwok fake node, kwok marks them Running and Ready.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import {
  applyComponent,
  applyObjects,
  KubeTimeoutError,
  waitForRollout,
  type KubeObject,
} from '../../../src/kube/index.js';
import { describeKube, useKube, useNamespace } from '../../harness/kube/index.js';

const podTemplate = (app: string, image: string, extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app } },
  spec: {
    containers: [{ name: 'main', image }],
    // Never pulled: kwok fakes the containers. The image name must still be valid.
    ...extra,
  },
});

const deployment = (ns: string, name: string, replicas: number, image: string, extra = {}) =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: podTemplate(name, image, extra),
    },
  }) satisfies KubeObject;

describeKube(
  'kube rollout waiters (controller-manager + scheduler + kwok)',
  () => {
    const kube = useKube();
    const ns = useNamespace(kube, 'rollout');

    it('waits for a Deployment to roll out, and again after a change', async () => {
      const { client } = kube();
      const component = `web-${randomBytes(3).toString('hex')}`;
      const t0 = Date.now();
      const first = await applyComponent(
        client,
        component,
        [deployment(ns(), 'web', 3, 'registry.invalid/web:1')],
        { rolloutTimeoutMs: 60_000 },
      );
      const created = Date.now() - t0;
      const ref = first.applied[0]!.ref;
      const live = (await client.get(ref))!;
      expect(live.status).toMatchObject({
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        observedGeneration: live.metadata.generation,
      });

      const pods = await client.list('v1', 'Pod', { namespace: ns(), labelSelector: 'app=web' });
      expect(pods).toHaveLength(3);
      for (const p of pods) {
        expect((p.spec as { nodeName: string }).nodeName).toBe(kube().nodeName);
        // kwok hands out pod IPs from the loopback pod CIDR.
        expect((p.status as { podIP: string }).podIP).toMatch(/^127\.244\./);
      }

      const t1 = Date.now();
      const second = await applyComponent(
        client,
        component,
        [deployment(ns(), 'web', 3, 'registry.invalid/web:2')],
        { rolloutTimeoutMs: 60_000 },
      );
      expect(second.applied[0]!.action).toBe('configured');
      const updated = (await client.get(ref))!;
      expect(updated.metadata.generation).toBe(2);
      expect(updated.status).toMatchObject({ updatedReplicas: 3, availableReplicas: 3 });
      console.log(
        `Deployment of 3: created and rolled out in ${created} ms, image change in ${Date.now() - t1} ms`,
      );
    });

    it('waits for a StatefulSet and a DaemonSet', async () => {
      const { client } = kube();
      const n = ns();
      const objects: KubeObject[] = [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'db', namespace: n },
          spec: {
            replicas: 2,
            serviceName: 'db',
            selector: { matchLabels: { app: 'db' } },
            template: podTemplate('db', 'registry.invalid/db:1'),
          },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: 'agent', namespace: n },
          spec: {
            selector: { matchLabels: { app: 'agent' } },
            template: podTemplate('agent', 'registry.invalid/agent:1'),
          },
        },
      ];
      const result = await applyObjects(client, objects);
      const [sts, ds] = await Promise.all(
        result.applied.map((a) => waitForRollout(client, a.ref, { timeoutMs: 60_000 })),
      );
      const byKind = Object.fromEntries([sts!, ds!].map((o) => [o.kind, o.status]));
      expect(byKind.StatefulSet).toMatchObject({ readyReplicas: 2, updatedReplicas: 2 });
      expect(byKind.DaemonSet).toMatchObject({
        desiredNumberScheduled: 1,
        updatedNumberScheduled: 1,
        numberAvailable: 1,
      });
    });

    it('times out naming the last state when pods cannot be scheduled', async () => {
      const { client } = kube();
      const [applied] = (
        await applyObjects(client, [
          deployment(ns(), 'stuck', 1, 'registry.invalid/stuck:1', {
            nodeSelector: { 'loko.dev/no-such-node': 'true' },
          }),
        ])
      ).applied;
      const err = await waitForRollout(client, applied!.ref, { timeoutMs: 3000 }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KubeTimeoutError);
      expect((err as Error).message).toMatch(
        new RegExp(`^timed out after 3s waiting for rollout of Deployment ${ns()}/stuck: `),
      );
      expect((err as KubeTimeoutError).lastState).toBe('0 of 1 updated replicas are available');
    });
  },
  { controllers: true },
);
