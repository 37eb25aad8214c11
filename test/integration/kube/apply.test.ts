/**
 * Server-side apply against the real kube-apiserver of the harness: create, no-op re-apply,
 * field conflicts, CRD-then-CR ordering, prune, strict field validation.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import {
  applyComponent,
  applyObjects,
  FieldConflictError,
  KubeApiError,
  UnknownKindError,
  type ApplyProgress,
  type KubeObject,
} from '../../../src/kube/index.js';
import { describeKube, useKube, useNamespace } from '../../harness/kube/index.js';

const rand = () => randomBytes(3).toString('hex');

const configMap = (ns: string, name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});

/** Objects with server-side defaulting (Service cluster IP, RBAC) to make a no-op meaningful. */
function appSet(ns: string): KubeObject[] {
  return [
    configMap(ns, 'settings', { color: 'blue', size: 'large' }),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'token', namespace: ns },
      type: 'Opaque',
      data: { token: Buffer.from('s3cret').toString('base64') },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'app', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'app', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'app' },
      subjects: [{ kind: 'ServiceAccount', name: 'app', namespace: ns }],
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'app', namespace: ns },
      spec: { selector: { app: 'app' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
  ];
}

describeKube('kube apply (server-side apply against kube-apiserver)', () => {
  const kube = useKube();
  const ns = useNamespace(kube, 'apply');

  it('creates every object with field manager loko', async () => {
    const { client } = kube();
    const result = await applyObjects(client, appSet(ns()));
    expect(result.applied.map((a) => [a.ref.kind, a.action])).toEqual([
      ['ServiceAccount', 'created'],
      ['Secret', 'created'],
      ['ConfigMap', 'created'],
      ['Role', 'created'],
      ['RoleBinding', 'created'],
      ['Service', 'created'],
    ]);
    const cm = await client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: ns(),
    });
    expect(cm?.data).toEqual({ color: 'blue', size: 'large' });
    expect(cm?.metadata.managedFields).toEqual([
      expect.objectContaining({ manager: 'loko', operation: 'Apply' }),
    ]);
  });

  it('re-applying the same set changes nothing (managedFields and resourceVersion)', async () => {
    const { client } = kube();
    const first = await applyObjects(client, appSet(ns()));
    const snapshot = async () =>
      Promise.all(
        first.applied.map(async (a) => {
          const o = (await client.get(a.ref))!;
          return { ref: a.ref, rv: o.metadata.resourceVersion, mf: o.metadata.managedFields };
        }),
      );
    const before = await snapshot();
    const second = await applyObjects(client, appSet(ns()));
    expect(second.applied.map((a) => a.action)).toEqual(first.applied.map(() => 'unchanged'));
    const after = await snapshot();
    expect(after).toEqual(before);
    // The Service got a cluster IP from the (loopback) service range and keeps it.
    const svc = second.applied.find((a) => a.ref.kind === 'Service')!.object;
    expect((svc.spec as { clusterIP: string }).clusterIP).toMatch(/^127\.96\./);
  });

  it('a dry run tells unchanged from configured objects and stores nothing', async () => {
    const { client } = kube();
    const first = await applyObjects(client, appSet(ns()));
    const dry = await applyObjects(client, appSet(ns()), { dryRun: true });
    expect(dry.applied.map((a) => a.action)).toEqual(first.applied.map(() => 'unchanged'));
    const changed = appSet(ns()).map((o) =>
      o.kind === 'ConfigMap' ? configMap(ns(), 'settings', { color: 'red', size: 'large' }) : o,
    );
    const dry2 = await applyObjects(client, changed, { dryRun: true });
    expect(dry2.applied.map((a) => [a.ref.kind, a.action])).toEqual(
      first.applied.map((a) => [
        a.ref.kind,
        a.ref.kind === 'ConfigMap' ? 'configured' : 'unchanged',
      ]),
    );
    const cm = await client.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: ns(),
    });
    expect(cm?.data).toEqual({ color: 'blue', size: 'large' });
  });

  it('reports a field owned by another manager as FieldConflictError; force takes it over', async () => {
    const { client } = kube();
    await client.apply(configMap(ns(), 'shared', { color: 'red' }), { fieldManager: 'other-tool' });

    const err = await applyObjects(client, [configMap(ns(), 'shared', { color: 'blue' })]).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FieldConflictError);
    const conflict = err as FieldConflictError;
    expect(conflict.status).toBe(409);
    expect(conflict.reason).toBe('Conflict');
    expect(conflict.kind).toBe('ConfigMap');
    expect(conflict.objectName).toBe('shared');
    expect(conflict.namespace).toBe(ns());
    expect(conflict.conflicts).toEqual([
      expect.objectContaining({ field: '.data.color', manager: 'other-tool' }),
    ]);
    expect(conflict.message).toContain('.data.color (owned by "other-tool")');

    const forced = await applyObjects(client, [configMap(ns(), 'shared', { color: 'blue' })], {
      force: true,
    });
    expect(forced.applied[0]!.action).toBe('configured');
    const cm = forced.applied[0]!.object;
    expect(cm.data).toEqual({ color: 'blue' });
    const managers = (cm.metadata.managedFields ?? []).map((m) => m.manager);
    expect(managers).toContain('loko');
    // other-tool no longer owns .data.color (its entry is gone or lost that field).
    const other = cm.metadata.managedFields?.find((m) => m.manager === 'other-tool');
    expect(JSON.stringify(other?.fieldsV1 ?? {})).not.toContain('f:color');
  });

  it('applies a CRD before its custom resource and waits until it is Established', async () => {
    const { client } = kube();
    const group = `t${rand()}.loko.test`;
    const crdName = `widgets.${group}`;
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
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
    };
    const widget: KubeObject = {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1', namespace: ns() },
      spec: { size: 3 },
    };
    try {
      // Alone, the custom resource cannot be applied: the API does not serve its kind yet.
      await expect(client.apply(widget)).rejects.toBeInstanceOf(UnknownKindError);

      const events: ApplyProgress[] = [];
      // The CR comes first in the input; the applier reorders.
      const result = await applyObjects(client, [widget, crd], {
        onProgress: (e) => events.push(e),
      });
      expect(result.applied.map((a) => a.ref.kind)).toEqual(['CustomResourceDefinition', 'Widget']);
      expect(events.map((e) => e.type)).toEqual(['applied', 'waiting', 'applied']);
      const stored = await client.get({
        apiVersion: widget.apiVersion,
        kind: 'Widget',
        name: 'w1',
        namespace: ns(),
      });
      expect(stored?.spec).toEqual({ size: 3 });
      const liveCrd = await client.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crdName,
      });
      const established = (
        liveCrd?.status as { conditions: { type: string; status: string }[] }
      ).conditions.find((c) => c.type === 'Established');
      expect(established?.status).toBe('True');

      // Strict field validation: a field the schema does not know is an error, not a silent drop.
      const bad = { ...widget, spec: { size: 3, colour: 'red' } };
      const err = await applyObjects(client, [bad]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeApiError);
      // (kube-apiserver answers an apply with an undeclared field with a 500.)
      expect((err as KubeApiError).status).toBe(500);
      expect((err as KubeApiError).message).toMatch(/\.spec\.colour: field not declared in schema/);
      expect((err as KubeApiError).message).toMatch(/^apply Widget apply-\d+-\w+\/w1: /);
    } finally {
      await client.delete({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crdName,
      });
    }
  });

  it('prunes objects of the component that left the set, and nothing else', async () => {
    const { client } = kube();
    const component = `demo-${rand()}`;
    const other = `other-${rand()}`;
    const n = ns();
    await applyComponent(client, component, [
      configMap(n, 'keep', { a: '1' }),
      configMap(n, 'drop', { b: '2' }),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'old-kind', namespace: n }, data: {} },
    ]);
    // Neighbours: no labels at all, and the same labels of another component.
    await client.apply(configMap(n, 'bystander', { c: '3' }), { fieldManager: 'someone' });
    await applyComponent(client, other, [configMap(n, 'other-component', { d: '4' })]);

    // Second render: 'drop' is gone; the Secret kind is gone entirely.
    const second = await applyComponent(client, component, [configMap(n, 'keep', { a: '1' })]);
    expect(second.applied.map((a) => a.action)).toEqual(['unchanged']);
    expect(second.pruned).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'drop', namespace: n },
    ]);
    const cm = (name: string) =>
      client.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: n });
    expect(await cm('drop')).toBeUndefined();
    expect(await cm('keep')).toBeDefined();
    expect(await cm('bystander')).toBeDefined();
    expect(await cm('other-component')).toBeDefined();
    // A kind that left the set is only looked at when named in pruneKinds.
    const secret = { apiVersion: 'v1', kind: 'Secret', name: 'old-kind', namespace: n };
    expect(await client.get(secret)).toBeDefined();
    const third = await applyComponent(client, component, [configMap(n, 'keep', { a: '1' })], {
      pruneKinds: [{ apiVersion: 'v1', kind: 'Secret' }],
    });
    expect(third.pruned).toEqual([secret]);
    expect(await client.get(secret)).toBeUndefined();
    const labels = (await cm('keep'))?.metadata.labels;
    expect(labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'loko',
      'loko.dev/component': component,
    });
  });
});
