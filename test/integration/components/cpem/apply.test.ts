/**
 * The CPEM component's objects on the harness's real kube-apiserver: every rendered object passes
 * a server-side dry-run where it belongs (kube-system and cluster scope), and a real apply followed
 * by a re-apply changes nothing (same resourceVersions), while a changed config changes exactly
 * the Secret and the DaemonSet's pod template (its checksum annotation), and the MetalLB choice
 * adds the metallb.io rules to the ClusterRole (and the loadbalancer key to the config). The
 * applied RBAC is checked with SubjectAccessReviews against the apiserver's own authorizer.
 *
 * The real applies go to a fresh namespace with suffixed cluster-scoped names, so they cannot race
 * other suites that apply the component to kube-system of the shared control plane.
 */
import { randomBytes } from 'node:crypto';
import { AuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, expect, it } from 'vitest';
import { cloudProviderEquinixMetal as cpem } from '../../../../src/components/cloud-provider-equinix-metal/index.js';
import type { CpemConfig } from '../../../../src/components/cloud-provider-equinix-metal/config.js';
import type { ComponentContext } from '../../../../src/components/types.js';
import { applyObjects, refOf, type KubeObject } from '../../../../src/kube/index.js';
import { describeKube, useKube, useNamespace } from '../../../harness/kube/index.js';

const config: CpemConfig = {
  image: 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1',
  logLevel: 2,
};

function ctx(over: Partial<ComponentContext> = {}): ComponentContext {
  return {
    clusterName: 'demo',
    projectId: '0a1b2c3d-0000-4000-8000-000000000001',
    metro: 'sv',
    controlPlaneEndpoint: {
      address: '127.0.0.10',
      port: 6443,
      eipTag: 'loko:control-plane-endpoint=demo',
    },
    metalApiKey: 'the-cluster-key',
    upstream: new Map(),
    components: new Set(['cloud-provider-equinix-metal']),
    ...over,
  };
}

/** A copy of `objs` living in namespace `ns`, cluster-scoped names suffixed with `-<suffix>`. */
function relocate(objs: KubeObject[], ns: string, suffix: string): KubeObject[] {
  return objs.map((o) => {
    const c = structuredClone(o) as KubeObject & {
      roleRef?: { kind: string; name: string };
      subjects?: { namespace?: string }[];
    };
    if (c.metadata.namespace) c.metadata.namespace = ns;
    else c.metadata.name = `${c.metadata.name}-${suffix}`;
    if (c.roleRef?.kind === 'ClusterRole') c.roleRef.name = `${c.roleRef.name}-${suffix}`;
    for (const s of c.subjects ?? []) if (s.namespace) s.namespace = ns;
    return c;
  });
}

describeKube('cloud-provider-equinix-metal on kube-apiserver', () => {
  const kube = useKube();
  const ns = useNamespace(kube, 'cpem');
  const clusterScoped: KubeObject[] = [];

  afterAll(async () => {
    const { client } = kube();
    for (const o of clusterScoped) await client.delete(refOf(o)).catch(() => undefined);
  });

  it('every rendered object passes a server-side dry-run, for each load balancer choice', async () => {
    const { client } = kube();
    const variants: Array<[CpemConfig, ComponentContext]> = [
      [config, ctx()],
      [{ ...config, loadBalancer: 'metallb' }, ctx()],
      [{ ...config, loadBalancer: 'kube-vip' }, ctx()],
      [config, { upstream: new Map(), components: new Set() }],
    ];
    for (const [c, x] of variants) {
      const objs = cpem.render(c, x);
      for (const o of objs) {
        const answer = await client.apply(o, { dryRun: true });
        expect(answer.metadata.name).toBe(o.metadata.name);
        // Nothing dropped or rewritten by the server's schema (e.g. a misspelled field).
        if (o.kind === 'DaemonSet') {
          const tpl = (answer.spec as { template: { spec: Record<string, unknown> } }).template
            .spec;
          const want = (o.spec as { template: { spec: Record<string, unknown> } }).template.spec;
          expect(tpl).toMatchObject(want);
        } else if (o.kind === 'ClusterRole' || o.kind === 'Role') {
          expect(answer.rules).toEqual(o.rules);
        } else if (o.kind === 'Secret') {
          expect(answer.data).toEqual(o.data);
        }
      }
    }
  });

  it('a re-apply changes nothing; a changed key rolls the DaemonSet; MetalLB adds the metallb.io rules', async () => {
    const { client } = kube();
    const suffix = randomBytes(3).toString('hex');
    const render = (c: CpemConfig, x: ComponentContext) =>
      relocate(cpem.render(c, x), ns(), suffix);
    const first = await applyObjects(client, render(config, ctx()));
    clusterScoped.push(...first.applied.filter((a) => !a.ref.namespace).map((a) => a.object));
    expect(first.applied.map((a) => a.action)).toEqual(first.applied.map(() => 'created'));

    const versions = async () =>
      Object.fromEntries(
        await Promise.all(
          first.applied.map(async (a) => [
            `${a.ref.kind}/${a.ref.name}`,
            (await client.get(a.ref))!.metadata.resourceVersion,
          ]),
        ),
      ) as Record<string, string>;
    const before = await versions();
    const second = await applyObjects(client, render(config, ctx()));
    expect(second.applied.map((a) => a.action)).toEqual(first.applied.map(() => 'unchanged'));
    expect(await versions()).toEqual(before);

    const annotation = (o: KubeObject) =>
      (o.spec as { template: { metadata: { annotations: Record<string, string> } } }).template
        .metadata.annotations['checksum/config'];
    const ds0 = first.applied.find((a) => a.ref.kind === 'DaemonSet')!.object;
    const rotated = await applyObjects(client, render(config, ctx({ metalApiKey: 'rotated' })));
    const changed = rotated.applied.filter((a) => a.action !== 'unchanged').map((a) => a.ref.kind);
    expect(changed.sort()).toEqual(['DaemonSet', 'Secret']);
    const ds1 = rotated.applied.find((a) => a.ref.kind === 'DaemonSet')!.object;
    expect(annotation(ds1)).not.toBe(annotation(ds0));
    expect(ds1.metadata.generation).toBe((ds0.metadata.generation ?? 0) + 1);

    const withMetallb = await applyObjects(
      client,
      render({ ...config, loadBalancer: 'metallb' }, ctx({ metalApiKey: 'rotated' })),
    );
    const changedLb = withMetallb.applied.filter((a) => a.action !== 'unchanged');
    expect(changedLb.map((a) => a.ref.kind).sort()).toEqual(['ClusterRole', 'DaemonSet', 'Secret']);
    const role = changedLb.find((a) => a.ref.kind === 'ClusterRole')!.object;
    expect((role.rules as { apiGroups: string[] }[]).at(-1)!.apiGroups).toEqual(['metallb.io']);
  });

  it("the applied RBAC grants CPEM's calls and no more: writes namespaced, endpoint reads cluster-wide, metallb.io only with MetalLB", async () => {
    const { client, kc } = kube();
    const suffix = randomBytes(3).toString('hex');
    const applied = await applyObjects(client, relocate(cpem.render(config, ctx()), ns(), suffix));
    clusterScoped.push(...applied.applied.filter((a) => !a.ref.namespace).map((a) => a.object));
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const user = `system:serviceaccount:${ns()}:cloud-provider-equinix-metal`;
    const can = async (
      verb: string,
      resource: string,
      opts: { group?: string; namespace?: string; subresource?: string } = {},
    ): Promise<boolean> => {
      const r = await authz.createSubjectAccessReview({
        body: {
          spec: {
            user,
            resourceAttributes: {
              verb,
              resource,
              group: opts.group ?? '',
              ...(opts.namespace ? { namespace: opts.namespace } : {}),
              ...(opts.subresource ? { subresource: opts.subresource } : {}),
            },
          },
        },
      });
      return r.status?.allowed === true;
    };
    /** The RBAC authorizer sees new roles through its informers: wait until it grants `check`. */
    const granted = async (check: () => Promise<boolean>): Promise<boolean> => {
      for (let i = 0; i < 100; i++) {
        if (await check()) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    };
    const lease = { group: 'coordination.k8s.io' };
    // Positive checks first, so the denials below are judged against propagated roles.
    expect(await granted(() => can('create', 'leases', { ...lease, namespace: ns() }))).toBe(true);
    expect(await granted(() => can('list', 'endpoints'))).toBe(true);
    // Leader election: only in its own namespace.
    expect(await can('create', 'leases', { ...lease, namespace: ns() })).toBe(true);
    expect(await can('update', 'leases', { ...lease, namespace: ns() })).toBe(true);
    expect(await can('create', 'leases', { ...lease, namespace: 'default' })).toBe(false);
    // Endpoints: written only in its namespace, read everywhere (the cluster-wide informer).
    expect(await can('patch', 'endpoints', { namespace: ns() })).toBe(true);
    expect(await can('patch', 'endpoints', { namespace: 'default' })).toBe(false);
    expect(await can('delete', 'endpoints', { namespace: ns() })).toBe(false);
    expect(await can('list', 'endpoints')).toBe(true);
    expect(await can('watch', 'endpoints', { namespace: 'default' })).toBe(true);
    // The rest cluster-wide, as upstream.
    expect(await can('delete', 'nodes')).toBe(true);
    expect(await can('patch', 'nodes', { subresource: 'status' })).toBe(true);
    expect(await can('update', 'services', { namespace: 'default' })).toBe(true);
    expect(await can('delete', 'services', { namespace: 'default' })).toBe(false);
    expect(await can('patch', 'services', { namespace: 'default', subresource: 'status' })).toBe(
      true,
    );
    expect(await can('get', 'namespaces')).toBe(true);
    expect(await can('list', 'namespaces')).toBe(false);
    expect(await can('create', 'events', { namespace: 'default' })).toBe(true);
    expect(await can('get', 'secrets', { namespace: 'kube-system' })).toBe(false);
    // MetalLB objects only when CPEM manages MetalLB.
    const pools = { group: 'metallb.io', namespace: 'metallb-system' };
    expect(await can('create', 'ipaddresspools', pools)).toBe(false);
    await applyObjects(
      client,
      relocate(cpem.render({ ...config, loadBalancer: 'metallb' }, ctx()), ns(), suffix),
    );
    for (const r of ['ipaddresspools', 'bgppeers', 'bgpadvertisements']) {
      expect(await granted(() => can('create', r, pools))).toBe(true);
      expect(await can('delete', r, pools)).toBe(true);
    }
  });
});
