/**
 * MetalLB on the harness apiserver, from the pinned manifest fetched through the real fetch code:
 * the real CRDs installed, every rendered object (pools and advertisement included) passes a
 * server-side dry-run; re-applying with a changed pool keeps every object's UID and touches only
 * what changed; the webhook readiness check waits for a ready endpoint.
 *
 * The ValidatingWebhookConfiguration is only dry-run: created for real, it would send every
 * metallb.io write of the shared control plane to a webhook nobody serves. The UID test applies
 * the rest into a namespace of its own (names rewritten from `metallb-system`) under a component
 * name of its own, so it cannot collide with other suites applying MetalLB.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import {
  metallb,
  METALLB_MANIFEST,
  type MetallbConfig,
} from '../../../../src/components/metallb/index.js';
import { waitForWebhookEndpoints } from '../../../../src/components/metallb/ready.js';
import type { ComponentContext } from '../../../../src/components/types.js';
import { applyComponent, applyObjects } from '../../../../src/kube/apply.js';
import { KubeTimeoutError } from '../../../../src/kube/errors.js';
import { objectKey, refOf, type KubeObject } from '../../../../src/kube/objects.js';
import { describeKube, useKube, useNamespace } from '../../../harness/kube/index.js';
import { describeUpstream, fetchPinned } from '../../../harness/upstream/index.js';
import { dryRunComponent } from '../dry-run.js';

const CONFIG: MetallbConfig = {
  addressPools: [
    { name: 'default', addresses: ['147.75.80.0/30'] },
    { name: 'public', addresses: ['147.75.40.16/28', '2604:1380:4641:c500::/64'] },
  ],
  controllerNodeSelectors: { 'node-role.kubernetes.io/control-plane': '' },
  speakerNodeSelectors: { 'loko.dev/bgp-enabled': 'true' },
  controllerTolerations: [
    { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
  ],
  speakerTolerations: [
    {
      key: 'dedicated',
      operator: 'Equal',
      value: 'lb',
      effect: 'NoExecute',
      tolerationSeconds: 30,
    },
  ],
};

/** Moves namespaced objects (and references to them) from metallb-system to `ns`. */
function relocate(objects: KubeObject[], ns: string): KubeObject[] {
  return objects
    .filter(
      (o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'ValidatingWebhookConfiguration',
    )
    .filter((o) => o.kind !== 'Namespace')
    .map((o) => JSON.parse(JSON.stringify(o).replaceAll('metallb-system', ns)) as KubeObject);
}

describeKube('metallb on the real apiserver', () => {
  const kube = useKube();
  const ns = useNamespace(kube, 'metallb');

  describeUpstream('pinned metallb-native.yaml', [METALLB_MANIFEST], () => {
    const context = async (): Promise<ComponentContext> => ({
      upstream: (await fetchPinned(metallb.upstream)).upstream,
      components: new Set(['metallb', 'flannel', 'cloud-provider-equinix-metal']),
    });

    it('installs the real CRDs, and every rendered object passes a server-side dry-run', async () => {
      const objects = metallb.render(CONFIG, await context());
      const { dryRun, failures } = await dryRunComponent(kube().client, 'metallb', objects);
      expect(failures).toEqual([]);
      expect(dryRun).toHaveLength(objects.length - 10); // 9 CRDs + the Namespace applied for real
      expect(dryRun).toEqual(
        expect.arrayContaining([
          'ValidatingWebhookConfiguration metallb-webhook-configuration',
          'Deployment metallb-system/controller',
          'DaemonSet metallb-system/speaker',
          'IPAddressPool metallb-system/default',
          'IPAddressPool metallb-system/public',
          'BGPAdvertisement metallb-system/loko',
        ]),
      );
    });

    it("re-applying with a changed pool keeps every object's UID and touches only what changed", async () => {
      const { client } = kube();
      const ctx = await context();
      // CRDs for real (idempotent; shared with other suites).
      await applyObjects(
        client,
        metallb.render(CONFIG, ctx).filter((o) => o.kind === 'CustomResourceDefinition'),
        { fieldManager: 'loko-test-harness' },
      );
      client.forgetDiscovery();
      const component = `metallb-t${randomBytes(3).toString('hex')}`;
      const first = await applyComponent(
        client,
        component,
        relocate(metallb.render(CONFIG, ctx), ns()),
      );
      expect(first.applied.every((a) => a.action === 'created')).toBe(true);
      const uids = new Map(first.applied.map((a) => [objectKey(a.ref), a.object.metadata.uid!]));
      expect(uids.size).toBe(first.applied.length);

      const changed: MetallbConfig = {
        ...CONFIG,
        addressPools: [
          { name: 'default', addresses: ['147.75.80.0/29'] },
          CONFIG.addressPools[1]!,
          { name: 'zzz-extra', addresses: ['198.51.100.0/24'] },
        ],
      };
      const second = await applyComponent(
        client,
        component,
        relocate(metallb.render(changed, ctx), ns()),
      );
      expect(second.pruned).toEqual([]);
      const actions = Object.fromEntries(
        second.applied.map((a) => [`${a.ref.kind}/${a.ref.name}`, a.action]),
      );
      expect(actions['IPAddressPool/default']).toBe('configured');
      expect(actions['IPAddressPool/zzz-extra']).toBe('created');
      expect(actions['BGPAdvertisement/loko']).toBe('configured');
      const others = Object.entries(actions).filter(
        ([k]) =>
          !['IPAddressPool/default', 'IPAddressPool/zzz-extra', 'BGPAdvertisement/loko'].includes(
            k,
          ),
      );
      expect(others.length).toBe(first.applied.length - 2);
      expect(others.filter(([, a]) => a !== 'unchanged')).toEqual([]);
      for (const [key, uid] of uids) {
        const now = second.applied.find((a) => objectKey(a.ref) === key);
        expect(now?.object.metadata.uid, key).toBe(uid);
        const live = await client.get(now!.ref);
        expect(live?.metadata.uid, key).toBe(uid);
      }
      const pool = await client.get({
        apiVersion: 'metallb.io/v1beta1',
        kind: 'IPAddressPool',
        name: 'default',
        namespace: ns(),
      });
      expect((pool?.spec as { addresses: string[] }).addresses).toEqual(['147.75.80.0/29']);

      // Back to the first config: the extra pool is pruned, the rest keeps its UIDs.
      const third = await applyComponent(
        client,
        component,
        relocate(metallb.render(CONFIG, ctx), ns()),
      );
      expect(third.pruned.map((r) => `${r.kind}/${r.name}`)).toEqual(['IPAddressPool/zzz-extra']);
      for (const a of third.applied)
        expect(a.object.metadata.uid).toBe(uids.get(objectKey(refOf(a.object))));
      // And once more: nothing changes at all.
      const fourth = await applyComponent(
        client,
        component,
        relocate(metallb.render(CONFIG, ctx), ns()),
      );
      expect(fourth.applied.filter((a) => a.action !== 'unchanged')).toEqual([]);
    });
  });

  it('the webhook readiness check waits for a ready endpoint of the webhook Service', async () => {
    const { client } = kube();
    const slice = (ready: boolean): KubeObject => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'hook-abc',
        namespace: ns(),
        labels: { 'kubernetes.io/service-name': 'hook' },
      },
      addressType: 'IPv4',
      // Never dialled (no webhook or Service uses it); the API refuses loopback endpoint addresses.
      endpoints: [{ addresses: ['192.0.2.10'], conditions: { ready } }],
      ports: [{ name: '', port: 9443, protocol: 'TCP' }],
    });
    const timeoutOf = (p: Promise<void>) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      );

    const none = await timeoutOf(waitForWebhookEndpoints({ client, timeoutMs: 300 }, ns(), 'hook'));
    expect(none).toBeInstanceOf(KubeTimeoutError);
    expect((none as Error).message).toContain(
      `webhook Service ${ns()}/hook to have a ready endpoint`,
    );
    expect((none as Error).message).toContain('no EndpointSlice yet');

    await client.apply(slice(false));
    const notReady = await timeoutOf(
      waitForWebhookEndpoints({ client, timeoutMs: 300 }, ns(), 'hook'),
    );
    expect((notReady as Error).message).toContain('1 endpoint(s), none ready');

    const waiting = waitForWebhookEndpoints({ client, timeoutMs: 60_000 }, ns(), 'hook');
    await client.apply(slice(true));
    await expect(waiting).resolves.toBeUndefined();
  });
});
