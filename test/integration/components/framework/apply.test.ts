/**
 * The component framework against the harness's real kube-apiserver: apply, a no-op re-apply
 * (resourceVersions unchanged), pruning what a component stops rendering, the two-step apply of
 * custom resources around the readiness checks, dependency checks, and an idempotent delete that
 * keeps the namespace unless asked.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import {
  applyComponents,
  ComponentApplyError,
  PLACEHOLDER_ANNOTATION,
  type ComponentProgress,
} from '../../../../src/components/apply.js';
import { deleteComponents } from '../../../../src/components/delete.js';
import type { ConfiguredComponent } from '../../../../src/components/resolve.js';
import type {
  ComponentContext,
  ComponentDefinition,
  ReadinessCheck,
} from '../../../../src/components/types.js';
import {
  COMPONENT_LABEL,
  componentSelector,
  MANAGED_BY_LABEL,
  type KubeClient,
  type KubeObject,
  type ObjectRef,
} from '../../../../src/kube/index.js';
import { describeKube, useKube } from '../../../harness/kube/index.js';
import { fakeComponent, type FakeConfig } from '../../../unit/components/framework/fake.js';

const rand = () => randomBytes(3).toString('hex');

interface Scenario {
  name: string;
  namespace: string;
  group: string;
  crdName: string;
  /** What the readiness check saw: was the custom resource there already? */
  readySaw: { crdEstablished: boolean; crPresent: boolean }[];
  def: ComponentDefinition<FakeConfig & { extraConfigMap?: boolean }>;
}

/**
 * A component with a Namespace, ConfigMaps, a Secret, a CRD and one custom resource of it
 * (`customResourceGroups`), and a readiness check recording what it saw.
 */
function scenario(): Scenario {
  const id = rand();
  const name = `fw-${id}`;
  const namespace = `fw-${id}`;
  const group = `fw${id}.loko.test`;
  const crdName = `widgets.${group}`;
  const readySaw: Scenario['readySaw'] = [];
  let client: KubeClient | undefined;
  const check: ReadinessCheck = {
    description: 'widgets can be served',
    async wait(rctx) {
      client = rctx.client;
      const crd = await client.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crdName,
      });
      const conds = ((crd?.status as { conditions?: { type: string; status: string }[] })
        ?.conditions ?? []) as { type: string; status: string }[];
      const cr = await client
        .get({ apiVersion: `${group}/v1`, kind: 'Widget', name: 'main', namespace })
        .catch(() => undefined);
      readySaw.push({
        crdEstablished: conds.some((c) => c.type === 'Established' && c.status === 'True'),
        crPresent: cr !== undefined,
      });
    },
  };
  const base = fakeComponent({ name, namespace });
  const def = {
    ...base,
    customResourceGroups: [group],
    ready: [check],
    render: (config: FakeConfig & { extraConfigMap?: boolean }, ctx: ComponentContext) => [
      ...base.render(config, ctx),
      ...(config.extraConfigMap
        ? [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `${name}-extra`, namespace },
              data: { x: '1' },
            },
          ]
        : []),
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: crdName },
        spec: {
          group,
          names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: { type: 'object', properties: { size: { type: 'integer' } } },
                  },
                },
              },
            },
          ],
        },
      },
      {
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { name: 'main', namespace },
        spec: { size: config.replicas },
      },
    ],
  } as ComponentDefinition<FakeConfig & { extraConfigMap?: boolean }>;
  return { name, namespace, group, crdName, readySaw, def };
}

const configured = (
  def: ComponentDefinition<never> | ComponentDefinition<FakeConfig>,
  config: Partial<FakeConfig> & { extraConfigMap?: boolean } = {},
): ConfiguredComponent => ({
  def: def as ComponentDefinition,
  config: { replicas: 1, greeting: 'hi', pools: [], ...config },
  configured: true,
});

const ctx = (names: string[]): ComponentContext => ({
  clusterName: 'demo',
  upstream: new Map(),
  components: new Set(names),
});

async function listComponent(client: KubeClient, s: Scenario): Promise<string[]> {
  const kinds: [string, string][] = [
    ['v1', 'Namespace'],
    ['v1', 'ConfigMap'],
    ['v1', 'Secret'],
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
    [`${s.group}/v1`, 'Widget'],
  ];
  const out: string[] = [];
  for (const [apiVersion, kind] of kinds) {
    if (!(await client.resourceInfo(apiVersion, kind).catch(() => undefined))) continue;
    for (const o of await client.list(apiVersion, kind, {
      labelSelector: componentSelector(s.name),
    })) {
      if (!o.metadata.deletionTimestamp) out.push(`${kind}/${o.metadata.name}`);
    }
  }
  return out.sort();
}

async function versions(client: KubeClient, refs: ObjectRef[]): Promise<string[]> {
  return Promise.all(
    refs.map(async (r) => (await client.get(r))?.metadata.resourceVersion ?? 'missing'),
  );
}

describeKube('component framework: apply and delete against kube-apiserver', () => {
  const kube = useKube();
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f().catch(() => {});
  });
  const track = (s: Scenario): void => {
    const { client } = kube();
    cleanup.push(
      () =>
        client.delete({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          name: s.crdName,
        }),
      () => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: s.namespace }),
    );
  };

  it('applies in two steps, then a re-apply changes nothing on the server', async () => {
    const { client } = kube();
    const s = scenario();
    track(s);
    const events: ComponentProgress[] = [];
    const [first] = await applyComponents(client, [configured(s.def)], ctx([s.name]), {
      onProgress: (e) => events.push(e),
    });
    expect(first).toMatchObject({
      name: s.name,
      namespace: s.namespace,
      objects: 5,
      created: 5,
      configured: 0,
      unchanged: 0,
      pruned: 0,
    });
    // The readiness check ran between the steps: CRD Established, the Widget not yet applied.
    expect(s.readySaw).toEqual([{ crdEstablished: true, crPresent: false }]);
    const order = events
      .filter((e) => e.type === 'ready' || e.type === 'custom-resources')
      .map((e) => e.type);
    expect(order).toEqual(['ready', 'custom-resources']);
    const applied = events.flatMap((e) =>
      e.type === 'object' && e.event.type === 'applied' ? [e.event.ref.kind] : [],
    );
    expect(applied.at(-1)).toBe('Widget');

    const widget = await client.get({
      apiVersion: `${s.group}/v1`,
      kind: 'Widget',
      name: 'main',
      namespace: s.namespace,
    });
    expect(widget!.metadata.labels).toMatchObject({
      [MANAGED_BY_LABEL]: 'loko',
      [COMPONENT_LABEL]: s.name,
    });
    expect(widget!.spec).toEqual({ size: 1 });

    const refs: ObjectRef[] = [
      { apiVersion: 'v1', kind: 'Namespace', name: s.namespace },
      { apiVersion: 'v1', kind: 'ConfigMap', name: `${s.name}-config`, namespace: s.namespace },
      { apiVersion: 'v1', kind: 'Secret', name: `${s.name}-secret`, namespace: s.namespace },
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: s.crdName },
      { apiVersion: `${s.group}/v1`, kind: 'Widget', name: 'main', namespace: s.namespace },
    ];
    const before = await versions(client, refs);
    const [again] = await applyComponents(client, [configured(s.def)], ctx([s.name]));
    expect(again).toMatchObject({ created: 0, configured: 0, unchanged: 5, pruned: 0 });
    expect(await versions(client, refs)).toEqual(before);
  });

  it('a changed config updates only what changed; what is no longer rendered is pruned once', async () => {
    const { client } = kube();
    const s = scenario();
    track(s);
    await applyComponents(client, [configured(s.def, { extraConfigMap: true })], ctx([s.name]));
    expect(await listComponent(client, s)).toEqual(
      [
        `ConfigMap/${s.name}-config`,
        `ConfigMap/${s.name}-extra`,
        `CustomResourceDefinition/${s.crdName}`,
        `Namespace/${s.namespace}`,
        `Secret/${s.name}-secret`,
        'Widget/main',
      ].sort(),
    );
    const secretRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      name: `${s.name}-secret`,
      namespace: s.namespace,
    };
    const secretVersion = (await client.get(secretRef))!.metadata.resourceVersion;

    // Step 1 runs with prune off, so the Widget (step 2) survives it; the extra ConfigMap goes.
    const [report] = await applyComponents(
      client,
      [configured(s.def, { replicas: 3 })],
      ctx([s.name]),
    );
    expect(report).toMatchObject({ created: 0, configured: 1, unchanged: 4, pruned: 1 });
    expect(report!.prunedRefs.map((r) => `${r.kind}/${r.name}`)).toEqual([
      `ConfigMap/${s.name}-extra`,
    ]);
    const widget = await client.get({
      apiVersion: `${s.group}/v1`,
      kind: 'Widget',
      name: 'main',
      namespace: s.namespace,
    });
    expect(widget!.spec).toEqual({ size: 3 });
    expect((await client.get(secretRef))!.metadata.resourceVersion).toBe(secretVersion);
  });

  it('a dry run stores nothing and skips what needs a namespace or CRD of the same apply', async () => {
    const { client } = kube();
    const s = scenario();
    track(s);
    const [report] = await applyComponents(client, [configured(s.def)], ctx([s.name]), {
      dryRun: true,
    });
    // The Namespace and the CRD are sent; the ConfigMap, Secret and Widget need them stored first.
    expect(report).toMatchObject({ objects: 5, created: 2, skipped: 3, dryRun: true });
    expect(s.readySaw).toEqual([]);
    expect(await listComponent(client, s)).toEqual([]);
  });

  it('refuses a component whose dependency is neither in the set nor installed, naming it', async () => {
    const { client } = kube();
    const dep = scenario();
    track(dep);
    const user = fakeComponent({
      name: `user-${rand()}`,
      namespace: dep.namespace,
      dependsOn: [dep.name],
      render: () => [],
    });
    const err = await applyComponents(client, [configured(user)], ctx([user.name])).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      `component "${user.name}" needs "${dep.name}", which is not installed on the cluster`,
    );
    expect((err as { hint?: string }).hint).toBe(
      `Apply it in the same run: loko component apply ${dep.name} ${user.name}`,
    );
    // In the same set (in dependency order) or already installed: fine.
    await applyComponents(client, [configured(dep.def), configured(user)], ctx([]));
    await applyComponents(client, [configured(user)], ctx([user.name]));
  });

  it('refuses to apply a render holding placeholders (it would overwrite live secrets)', async () => {
    const { client } = kube();
    const name = `ph-${rand()}`;
    const def = fakeComponent({
      name,
      render: () => [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'creds',
            namespace: name,
            annotations: { [PLACEHOLDER_ANNOTATION]: 'apiKey,projectID' },
          },
          stringData: { apiKey: 'placeholder' },
        },
      ],
    });
    const err = await applyComponents(client, [configured(def)], ctx([name])).catch(
      (e: unknown) => e as Error,
    );
    expect((err as Error).message).toContain(
      `Secret ${name}/creds holds placeholders for apiKey, projectID; not applying it`,
    );
    expect(await client.get({ apiVersion: 'v1', kind: 'Namespace', name })).toBeUndefined();
  });

  it('prunes an object whose whole kind the component no longer renders', async () => {
    const { client } = kube();
    const name = `kinds-${rand()}`;
    cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name }));
    const objects = (withSecret: boolean) => [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: name } },
      ...(withSecret
        ? [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gone', namespace: name } }]
        : []),
    ];
    let withSecret = true;
    const def = fakeComponent({ name, namespace: name, render: () => objects(withSecret) });
    await applyComponents(client, [configured(def)], ctx([name]));
    const secret = { apiVersion: 'v1', kind: 'Secret', name: 'gone', namespace: name };
    expect(await client.get(secret)).toBeDefined();
    withSecret = false;
    const [report] = await applyComponents(client, [configured(def)], ctx([name]));
    expect(report!.prunedRefs.map((r) => `${r.kind}/${r.name}`)).toEqual(['Secret/gone']);
    const gone = await client.get(secret);
    expect(gone === undefined || gone.metadata.deletionTimestamp !== undefined).toBe(true);
    expect(
      await client.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', namespace: name }),
    ).toBeDefined();
  });

  it('names the component when the API refuses an object', async () => {
    const { client } = kube();
    const bad = fakeComponent({
      name: `bad-${rand()}`,
      render: () => [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'x', namespace: 'no-such-namespace-here' },
          data: { a: 'b' },
        } as KubeObject,
      ],
    });
    const err = await applyComponents(client, [configured(bad)], ctx([bad.name])).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ComponentApplyError);
    expect((err as Error).message).toMatch(new RegExp(`^component "${bad.name}": `));
    expect((err as Error).message).toContain('no-such-namespace-here');
  });

  it('delete removes exactly what loko applied, keeps the namespace, and is idempotent', async () => {
    const { client } = kube();
    const s = scenario();
    track(s);
    await applyComponents(client, [configured(s.def)], ctx([s.name]));
    // An object of someone else in the namespace is not touched.
    await client.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'not-loko', namespace: s.namespace },
      data: { mine: 'yes' },
    });

    const [report] = await deleteComponents(client, [configured(s.def)]);
    expect(report!.deleted.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(
      [
        `ConfigMap/${s.name}-config`,
        `CustomResourceDefinition/${s.crdName}`,
        `Secret/${s.name}-secret`,
        'Widget/main',
      ].sort(),
    );
    // Custom resources go before their CRD.
    const kinds = report!.deleted.map((r) => r.kind);
    expect(kinds.indexOf('Widget')).toBeLessThan(kinds.indexOf('CustomResourceDefinition'));
    expect(report!.keptNamespace).toBe(true);
    expect(
      await client.get({ apiVersion: 'v1', kind: 'Namespace', name: s.namespace }),
    ).toBeDefined();
    expect(
      await client.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'not-loko',
        namespace: s.namespace,
      }),
    ).toBeDefined();

    const [again] = await deleteComponents(client, [configured(s.def)]);
    expect(again!.deleted).toEqual([]);

    const [withNs] = await deleteComponents(client, [configured(s.def)], {
      deleteNamespace: true,
    });
    expect(withNs!.deleted.map((r) => `${r.kind}/${r.name}`)).toEqual([`Namespace/${s.namespace}`]);
    expect(withNs!.keptNamespace).toBe(false);
  });
});
