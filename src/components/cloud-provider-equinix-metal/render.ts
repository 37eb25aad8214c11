/**
 * Pure render of CPEM's objects: the config Secret, the DaemonSet and the RBAC (rbac.ts).
 * Manifest shape follows K:deploy/template/deployment.yaml of v3.8.1 (cpem.md §2.1).
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../kube/objects.js';
import type { ComponentContext } from '../types.js';
import {
  PLACEHOLDER_ANNOTATION,
  cloudConfig,
  effectiveLoadBalancer,
  type CloudConfig,
} from './cloud-config.js';
import { CPEM_NAME, type CpemConfig } from './config.js';
import { CPEM_NAMESPACE, rbacObjects } from './rbac.js';

/** The Secret CPEM reads (name and key fixed since v3.0.0, cpem.md §1.3). */
export const CONFIG_SECRET = 'metal-cloud-config';
/** The key of {@link CONFIG_SECRET} holding the JSON config. */
export const CONFIG_KEY = 'cloud-sa.json';
/** Where the Secret is mounted (read-only) in the pod. */
export const CONFIG_DIR = '/etc/cloud-sa';
/**
 * Pod-template annotation with the sha256 of the Secret's contents: a changed config changes the
 * template and rolls the pods (CPEM reads its config only at start), an unchanged one leaves the
 * template, and so the DaemonSet, untouched. Same name as the upstream chart's (cpem.md §2.1).
 */
export const CONFIG_CHECKSUM_ANNOTATION = 'checksum/config';

/**
 * Args of the CPEM container (cpem.md §2.1): the provider name `equinixmetal`, leader election
 * (the DaemonSet runs one pod per control-plane node since v3.5.0), no lookup of the
 * extension-apiserver-authentication ConfigMap, the config file, and klog verbosity.
 */
export function cpemArgs(logLevel: number): string[] {
  return [
    '--cloud-provider=equinixmetal',
    '--leader-elect=true',
    '--authentication-skip-lookup=true',
    `--cloud-config=${CONFIG_DIR}/${CONFIG_KEY}`,
    `--v=${logLevel}`,
  ];
}

/**
 * Tolerations (cpem.md §2.1): CPEM is what removes the `uninitialized` taint, so it must run on
 * nodes carrying it; control-plane and legacy master taints because it runs there; `not-ready`
 * (v3.4.1, `d9e7dcc`) so it can place the control-plane EIP before nodes are Ready (a CNI may need
 * the API endpoint); `CriticalAddonsOnly` as the upstream manifest has it.
 */
export function cpemTolerations(): Record<string, string>[] {
  return [
    {
      key: 'node.cloudprovider.kubernetes.io/uninitialized',
      value: 'true',
      effect: 'NoSchedule',
    },
    { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'CriticalAddonsOnly', operator: 'Exists' },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
  ];
}

/**
 * Node affinity: control-plane nodes only, any one of the three label forms the upstream manifest
 * accepts (cpem.md §2.1); terms of `nodeSelectorTerms` are ORed.
 */
export function cpemAffinity(): Record<string, unknown> {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/role', operator: 'In', values: ['master'] }] },
          {
            matchExpressions: [
              { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' },
            ],
          },
          { matchExpressions: [{ key: 'node-role.kubernetes.io/master', operator: 'Exists' }] },
        ],
      },
    },
  };
}

/** sha256 (hex) of the Secret's data, key by key in sorted order. */
export function configChecksum(data: Record<string, string>): string {
  const h = createHash('sha256');
  for (const k of Object.keys(data).sort()) h.update(`${k}\0${data[k]}\0`);
  return h.digest('hex');
}

/** The config Secret; `data` (base64) rather than `stringData` so applies compare byte-for-byte. */
export function configSecret(cc: CloudConfig): KubeObject {
  const annotations =
    cc.placeholders.length > 0
      ? { [PLACEHOLDER_ANNOTATION]: cc.placeholders.join(',') }
      : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: CONFIG_SECRET,
      namespace: CPEM_NAMESPACE,
      ...(annotations ? { annotations } : {}),
    },
    type: 'Opaque',
    data: { [CONFIG_KEY]: Buffer.from(cc.text, 'utf8').toString('base64') },
  };
}

/** The DaemonSet (a DaemonSet with leader election since v3.5.0, cpem.md §2.1). */
export function cpemDaemonSet(config: CpemConfig, checksum: string): KubeObject {
  const labels = { app: CPEM_NAME };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: CPEM_NAME, namespace: CPEM_NAMESPACE, labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { [CONFIG_CHECKSUM_ANNOTATION]: checksum } },
        spec: {
          serviceAccountName: CPEM_NAME,
          hostNetwork: true,
          dnsPolicy: 'Default',
          priorityClassName: 'system-cluster-critical',
          affinity: cpemAffinity(),
          tolerations: cpemTolerations(),
          containers: [
            {
              name: CPEM_NAME,
              image: config.image,
              // A tag-pinned image: pull only when missing (the chart's choice, cpem.md §2.1).
              imagePullPolicy: 'IfNotPresent',
              command: ['./cloud-provider-equinix-metal'],
              args: cpemArgs(config.logLevel),
              resources: { requests: { cpu: '100m', memory: '50Mi' } },
              volumeMounts: [{ name: 'cloud-config', mountPath: CONFIG_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: 'cloud-config', secret: { secretName: CONFIG_SECRET } }],
        },
      },
    },
  };
}

/** Every object of the component, in a fixed order (the applier orders by kind anyway). */
export function renderCpem(config: CpemConfig, ctx: ComponentContext): KubeObject[] {
  const cc = cloudConfig(config, ctx);
  const secret = configSecret(cc);
  const checksum = configChecksum(secret.data as Record<string, string>);
  return [
    ...rbacObjects(effectiveLoadBalancer(config, ctx) === 'metallb'),
    secret,
    cpemDaemonSet(config, checksum),
  ];
}
