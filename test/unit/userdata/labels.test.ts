import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_KUBERNETES_VERSION,
  kubeletMaySetLabel,
  kubernetesMinor,
  labelKeyProblem,
  labelValueProblem,
  nodeLabelsArg,
} from '../../../src/platforms/equinixmetal/userdata/index.js';

describe('kubeletMaySetLabel (NodeRestriction / kubelet --node-labels rules)', () => {
  it.each([
    ['loko.dev/bgp-enabled', true],
    ['loko.dev/pool', true],
    ['example.com/tier', true],
    ['tier', true],
    ['kubernetes.io/hostname', true],
    ['kubernetes.io/arch', true],
    ['topology.kubernetes.io/zone', true],
    ['node.kubernetes.io/instance-type', true],
    ['node.kubernetes.io/anything', true],
    ['sub.node.kubernetes.io/anything', true],
    ['kubelet.kubernetes.io/anything', true],
    ['node-role.kubernetes.io/worker', false],
    ['node-restriction.kubernetes.io/x', false],
    ['kubernetes.io/role', false],
    ['k8s.io/x', false],
    ['sub.k8s.io/x', false],
    ['notkubernetes.io/x', true],
  ])('%s -> %s', (key, allowed) => {
    expect(kubeletMaySetLabel(key)).toBe(allowed);
  });
});

describe('label syntax', () => {
  it('accepts Kubernetes label keys and values and rejects the rest', () => {
    expect(labelKeyProblem('example.com/tier')).toBeUndefined();
    expect(labelKeyProblem('a')).toBeUndefined();
    expect(labelKeyProblem('EXAMPLE.com/x')).toMatch(/prefix/);
    expect(labelKeyProblem('example.com/')).toMatch(/name/);
    expect(labelKeyProblem('x'.repeat(64))).toMatch(/name/);
    expect(labelValueProblem('')).toBeUndefined();
    expect(labelValueProblem('web-1.a_b')).toBeUndefined();
    expect(labelValueProblem('a=b')).toBeDefined();
    expect(labelValueProblem('-a')).toBeDefined();
  });

  it('joins labels into the kubelet flag form', () => {
    expect(nodeLabelsArg({ a: '1', 'b.io/c': '' })).toBe('a=1,b.io/c=');
  });
});

describe('versions', () => {
  it('the default Kubernetes version is the one the test binaries are built at', () => {
    const versions = JSON.parse(
      readFileSync(new URL('../../../tools/k8s/versions.json', import.meta.url), 'utf8'),
    ) as { kubernetes: string };
    expect(DEFAULT_KUBERNETES_VERSION).toBe(versions.kubernetes);
  });

  it('derives the pkgs.k8s.io minor', () => {
    expect(kubernetesMinor('v1.36.3')).toBe('v1.36');
    expect(() => kubernetesMinor('1.36')).toThrow();
  });
});
