import { describe, expect, it } from 'vitest';
import {
  componentSelector,
  crdState,
  kindRank,
  KIND_ORDER,
  objectKey,
  orderForApply,
  refOf,
  validateObjects,
  withComponentLabels,
  type KubeObject,
} from '../../../src/kube/index.js';

const o = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

describe('orderForApply', () => {
  it('puts Namespaces and CRDs first, custom resources last, keeping input order within a kind', () => {
    const input = [
      o('example.com/v1', 'Widget', 'w1', 'a'),
      o('apps/v1', 'Deployment', 'd1', 'a'),
      o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'hook'),
      o('v1', 'ConfigMap', 'c2', 'a'),
      o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com'),
      o('v1', 'ConfigMap', 'c1', 'a'),
      o('v1', 'Namespace', 'a'),
      o('rbac.authorization.k8s.io/v1', 'ClusterRole', 'r'),
      o('v1', 'ServiceAccount', 'sa', 'a'),
      o('example.com/v1', 'Gadget', 'g1', 'a'),
    ];
    const { first, rest } = orderForApply(input);
    expect(first.map((x) => x.metadata.name)).toEqual(['a', 'widgets.example.com']);
    expect(rest.map((x) => `${x.kind}/${x.metadata.name}`)).toEqual([
      'ServiceAccount/sa',
      'ConfigMap/c2',
      'ConfigMap/c1',
      'ClusterRole/r',
      'Deployment/d1',
      'ValidatingWebhookConfiguration/hook',
      'Widget/w1',
      'Gadget/g1',
    ]);
    // the input is not reordered in place
    expect(input[0]!.kind).toBe('Widget');
  });

  it('ranks unknown kinds after every known one', () => {
    expect(kindRank('Namespace')).toBe(0);
    expect(kindRank('Widget')).toBe(KIND_ORDER.length);
    expect(kindRank('ValidatingWebhookConfiguration')).toBeGreaterThan(kindRank('Deployment'));
  });
});

describe('validateObjects', () => {
  it('names what is missing or duplicated', () => {
    expect(() =>
      validateObjects([{ kind: 'ConfigMap', metadata: { name: 'x' } } as KubeObject]),
    ).toThrow('object #1 (ConfigMap) has no apiVersion');
    expect(() =>
      validateObjects([{ apiVersion: 'v1', metadata: { name: 'x' } } as KubeObject]),
    ).toThrow('object #1 has no kind');
    expect(() =>
      validateObjects([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } as KubeObject]),
    ).toThrow('object #1 (ConfigMap) has no metadata.name');
    // same object under two versions of its group is still the same object
    expect(() =>
      validateObjects([
        o('apps/v1', 'Deployment', 'd', 'n'),
        o('apps/v1beta2', 'Deployment', 'd', 'n'),
      ]),
    ).toThrow('Deployment d appears twice in the set');
    expect(() =>
      validateObjects([o('v1', 'ConfigMap', 'd', 'n'), o('v1', 'ConfigMap', 'd', 'm')]),
    ).not.toThrow();
  });
});

describe('crdState', () => {
  const crd = (conditions: object[]): KubeObject => ({
    ...o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'x.example.com'),
    status: { conditions },
  });
  it('is established only with Established=True', () => {
    expect(crdState(crd([]))).toEqual({
      established: false,
      state: 'no Established condition yet',
    });
    expect(crdState(crd([{ type: 'Established', status: 'False', reason: 'Installing' }]))).toEqual(
      {
        established: false,
        state: 'Established=False (Installing)',
      },
    );
    expect(crdState(crd([{ type: 'Established', status: 'True' }]))).toEqual({
      established: true,
      state: 'Established',
    });
  });
  it('reports rejected names', () => {
    expect(
      crdState(
        crd([{ type: 'NamesAccepted', status: 'False', message: '"widgets" is already in use' }]),
      ).state,
    ).toBe('names not accepted: "widgets" is already in use');
  });
});

describe('labels and keys', () => {
  it('adds the managed-by and component labels without touching the input', () => {
    const input = {
      ...o('v1', 'ConfigMap', 'c', 'n'),
      metadata: { name: 'c', namespace: 'n', labels: { app: 'x' } },
    };
    const out = withComponentLabels(input, 'cni');
    expect(out.metadata.labels).toEqual({
      app: 'x',
      'app.kubernetes.io/managed-by': 'loko',
      'loko.dev/component': 'cni',
    });
    expect(input.metadata.labels).toEqual({ app: 'x' });
    expect(componentSelector('cni')).toBe(
      'app.kubernetes.io/managed-by=loko,loko.dev/component=cni',
    );
  });
  it('refuses an object that claims another manager or component', () => {
    const foreign = {
      ...o('v1', 'ConfigMap', 'c'),
      metadata: { name: 'c', labels: { 'app.kubernetes.io/managed-by': 'Helm' } },
    };
    expect(() => withComponentLabels(foreign, 'cni')).toThrow(
      'ConfigMap c: label app.kubernetes.io/managed-by=Helm conflicts with app.kubernetes.io/managed-by=loko',
    );
  });
  it('keys objects by group, kind, namespace and name (not version)', () => {
    expect(objectKey(refOf(o('apps/v1', 'Deployment', 'd', 'n')))).toBe('apps/Deployment/n/d');
    expect(objectKey(refOf(o('v1', 'Namespace', 'n')))).toBe('/Namespace//n');
  });
});
