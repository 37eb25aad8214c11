/**
 * The webhook stand-in's pure parts: which Services it serves, the caBundle patches (only where
 * they differ, guarded by `test` operations), endpoints from EndpointSlices, and its answers to
 * AdmissionReview and ConversionReview.
 */
import { describe, expect, it } from 'vitest';
import {
  answerReview,
  crdCaPatch,
  foreignCaBundles,
  foreignCrdCaBundle,
  serviceDnsNames,
  serviceEndpoints,
  webhookCaPatch,
  webhookServices,
  type CrdView,
  type WebhookConfigView,
} from '../../../../src/emulator/twin/webhooks.js';

const svc = (name: string, port?: number, caBundle?: string) => ({
  service: { namespace: 'metallb-system', name, path: '/x', ...(port ? { port } : {}) },
  ...(caBundle ? { caBundle } : {}),
});

const config: WebhookConfigView = {
  metadata: { name: 'metallb-webhook-configuration' },
  webhooks: [
    { name: 'a.metallb.io', clientConfig: svc('metallb-webhook-service') },
    { name: 'b.metallb.io', clientConfig: svc('metallb-webhook-service', undefined, 'QUJD') },
    { name: 'url.example', clientConfig: { url: 'https://127.0.0.1:9/x' } },
  ],
};
const conversionCrd: CrdView = {
  metadata: { name: 'bgppeers.metallb.io' },
  spec: {
    conversion: { strategy: 'Webhook', webhook: { clientConfig: svc('metallb-webhook-service') } },
  },
};

describe('webhookServices', () => {
  it('collects each Service once (port 443 by default), ignoring URL webhooks and CRDs without conversion webhooks', () => {
    const none: CrdView = { metadata: { name: 'x' }, spec: { conversion: { strategy: 'None' } } };
    expect(webhookServices([config], [conversionCrd, none])).toEqual([
      { namespace: 'metallb-system', name: 'metallb-webhook-service', port: 443 },
    ]);
    const other: WebhookConfigView = {
      metadata: { name: 'o' },
      webhooks: [{ name: 'o', clientConfig: svc('other', 8443) }],
    };
    expect(webhookServices([config, other], [])).toHaveLength(2);
  });
});

describe('caBundle patches', () => {
  it('patches only the service webhooks whose bundle differs, each guarded by a test of its name', () => {
    expect(webhookCaPatch(config, 'QUJD')).toEqual([
      { op: 'test', path: '/webhooks/0/name', value: 'a.metallb.io' },
      { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: 'QUJD' },
    ]);
    expect(webhookCaPatch(config, 'TkVX')).toHaveLength(4);
  });

  it('is undefined when every bundle is already right (no write, no churn)', () => {
    const done: WebhookConfigView = {
      ...config,
      webhooks: config.webhooks!.map((w) =>
        w.clientConfig?.service
          ? { ...w, clientConfig: { ...w.clientConfig, caBundle: 'QUJD' } }
          : w,
      ),
    };
    expect(webhookCaPatch(done, 'QUJD')).toBeUndefined();
  });

  it("leaves a caBundle another manager set (no fight with loko's apply or an injector), but replaces its own", () => {
    const owned = (manager: string): WebhookConfigView => ({
      metadata: {
        name: 'w',
        managedFields: [
          {
            manager,
            fieldsV1: {
              'f:webhooks': {
                'k:{"name":"b.metallb.io"}': { 'f:clientConfig': { 'f:caBundle': {} } },
              },
            },
          },
        ],
      },
      webhooks: [config.webhooks![1]!],
    });
    expect(foreignCaBundles(owned('loko'), 'TkVX')).toEqual(new Map([['b.metallb.io', ['loko']]]));
    expect(webhookCaPatch(owned('loko'), 'TkVX')).toBeUndefined();
    expect(foreignCaBundles(owned('loko-emulator-twin'), 'TkVX').size).toBe(0);
    expect(webhookCaPatch(owned('loko-emulator-twin'), 'TkVX')).toHaveLength(2);
    const crd = structuredClone(conversionCrd);
    crd.spec!.conversion!.webhook!.clientConfig!.caBundle = 'QUJD';
    crd.metadata.managedFields = [
      {
        manager: 'cainjector',
        fieldsV1: {
          'f:spec': {
            'f:conversion': { 'f:webhook': { 'f:clientConfig': { 'f:caBundle': {} } } },
          },
        },
      },
    ];
    expect(foreignCrdCaBundle(crd, 'TkVX')).toEqual(['cainjector']);
    expect(crdCaPatch(crd, 'TkVX')).toBeUndefined();
  });

  it('patches a conversion webhook of a CRD, guarded by the strategy', () => {
    expect(crdCaPatch(conversionCrd, 'QUJD')).toEqual([
      { op: 'test', path: '/spec/conversion/strategy', value: 'Webhook' },
      { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: 'QUJD' },
    ]);
    const done = structuredClone(conversionCrd);
    done.spec!.conversion!.webhook!.clientConfig!.caBundle = 'QUJD';
    expect(crdCaPatch(done, 'QUJD')).toBeUndefined();
    expect(crdCaPatch({ metadata: { name: 'n' } }, 'QUJD')).toBeUndefined();
  });
});

describe('serviceEndpoints', () => {
  const ref = { namespace: 'metallb-system', name: 'metallb-webhook-service', port: 443 };
  const service = { spec: { ports: [{ port: 443, targetPort: 9443 }] } };

  it('takes the ready addresses and the resolved target port of the unnamed Service port', () => {
    const slices = [
      {
        addressType: 'IPv4',
        ports: [{ name: '', port: 9443 }],
        endpoints: [
          {
            addresses: ['10.2.1.1'],
            conditions: { ready: true },
            targetRef: { kind: 'Pod', name: 'controller-x', namespace: 'metallb-system' },
          },
          { addresses: ['10.2.1.2'], conditions: { ready: false } },
          { addresses: ['10.2.1.3'], conditions: {} },
        ],
      },
      {
        addressType: 'IPv6',
        ports: [{ name: '', port: 9443 }],
        endpoints: [{ addresses: ['fd00::1'] }],
      },
    ];
    expect(serviceEndpoints(ref, service, slices)).toEqual([
      { ip: '10.2.1.1', port: 9443, pod: 'metallb-system/controller-x' },
      { ip: '10.2.1.3', port: 9443 },
    ]);
  });

  it('matches a named Service port by name, and finds nothing for a port the Service lacks', () => {
    const named = { spec: { ports: [{ name: 'https', port: 443, targetPort: 'webhook' }] } };
    const slices = [
      {
        ports: [
          { name: 'metrics', port: 9120 },
          { name: 'https', port: 9443 },
        ],
        endpoints: [{ addresses: ['10.2.1.1'] }],
      },
    ];
    expect(serviceEndpoints(ref, named, slices)).toEqual([{ ip: '10.2.1.1', port: 9443 }]);
    expect(serviceEndpoints({ ...ref, port: 8443 }, named, slices)).toEqual([]);
    // A slice the controller could not fill (no ports, no endpoints) gives nothing.
    expect(serviceEndpoints(ref, service, [{ ports: null, endpoints: null }])).toEqual([]);
  });
});

describe('answerReview', () => {
  it('allows an AdmissionReview without a patch, in the version it was asked in', () => {
    for (const v of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
      expect(
        answerReview({
          apiVersion: v,
          kind: 'AdmissionReview',
          request: { uid: 'u1', object: { kind: 'IPAddressPool' } },
        }),
      ).toEqual({ apiVersion: v, kind: 'AdmissionReview', response: { uid: 'u1', allowed: true } });
    }
  });

  it('converts by rewriting apiVersion and keeps everything else', () => {
    const obj = {
      apiVersion: 'metallb.io/v1beta1',
      kind: 'BGPPeer',
      metadata: { name: 'p' },
      spec: { myASN: 65000 },
    };
    expect(
      answerReview({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u2', desiredAPIVersion: 'metallb.io/v1beta2', objects: [obj] },
      }),
    ).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'u2',
        convertedObjects: [{ ...obj, apiVersion: 'metallb.io/v1beta2' }],
        result: { status: 'Success' },
      },
    });
  });

  it('refuses anything else', () => {
    expect(answerReview({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1' })).toBe(
      undefined,
    );
    expect(
      answerReview({
        kind: 'TokenReview',
        apiVersion: 'authentication.k8s.io/v1',
        request: { uid: 'x' },
      }),
    ).toBe(undefined);
    expect(
      answerReview({
        kind: 'ConversionReview',
        apiVersion: 'apiextensions.k8s.io/v1',
        request: { uid: 'x' },
      }),
    ).toBe(undefined);
    expect(answerReview(null)).toBe(undefined);
  });
});

it('serviceDnsNames: the name the apiserver verifies comes first', () => {
  expect(serviceDnsNames('metallb-system', 'metallb-webhook-service')[0]).toBe(
    'metallb-webhook-service.metallb-system.svc',
  );
});
