/** `loko health`'s evaluation: control plane from /readyz, expected nodes Ready, missing, NotReady. */
import { describe, expect, it } from 'vitest';
import { desiredState } from '../../../src/platforms/equinixmetal/desired.js';
import { evaluateHealth, failedReadyzChecks } from '../../../src/platforms/equinixmetal/health.js';
import type { NodeStatus } from '../../../src/platforms/equinixmetal/kubernetes.js';
import { cluster } from './fixtures.js';

const SERVER = 'https://127.5.192.0:6443';
const desired = desiredState(cluster());
const node = (name: string, ready = true, detail?: string): NodeStatus => ({
  name,
  ready,
  ...(detail ? { detail } : {}),
  labels: {},
  taints: [],
});
const all = ['demo-controller-0', 'demo-general-0', 'demo-general-1', 'demo-edge-0'];
const OK = { status: 200, body: '[+]ping ok\n[+]etcd ok\nreadyz check passed\n' };

describe('evaluateHealth', () => {
  it('healthy when the control plane is ready and every expected node is Ready', () => {
    const r = evaluateHealth(
      desired,
      SERVER,
      OK,
      all.map((n) => node(n)),
    );
    expect(r.healthy).toBe(true);
    expect(r.problems).toEqual([]);
    expect(r.controlPlane).toEqual({ ready: true, detail: 'ok', failedChecks: [] });
    expect(r.nodes.map((n) => [n.name, n.role, n.pool, n.status])).toEqual([
      ['demo-controller-0', 'controller', undefined, 'Ready'],
      ['demo-general-0', 'worker', 'general', 'Ready'],
      ['demo-general-1', 'worker', 'general', 'Ready'],
      ['demo-edge-0', 'worker', 'edge', 'Ready'],
    ]);
  });

  it('names missing and NotReady nodes with the reason; extra nodes are listed, not a problem', () => {
    const r = evaluateHealth(desired, SERVER, OK, [
      node('demo-controller-0'),
      node('demo-general-0', false, 'KubeletNotReady: container runtime network not ready'),
      node('demo-edge-0'),
      node('someone-else'),
    ]);
    expect(r.healthy).toBe(false);
    expect(r.problems).toEqual([
      '1 node is missing: demo-general-1',
      'node demo-general-0 is NotReady: KubeletNotReady: container runtime network not ready',
    ]);
    expect(r.unexpected).toEqual(['someone-else']);
  });

  it('reports failed /readyz checks and an API that does not answer', () => {
    const failing = {
      status: 500,
      body: '[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/rbac failed\n',
    };
    const r = evaluateHealth(
      desired,
      SERVER,
      failing,
      all.map((n) => node(n)),
    );
    expect(r.controlPlane).toEqual({
      ready: false,
      detail: 'HTTP 500',
      failedChecks: ['etcd', 'poststarthook/rbac'],
    });
    expect(r.problems).toEqual([
      'the control plane is not ready (/readyz HTTP 500; failed: etcd, poststarthook/rbac)',
    ]);
    const down = evaluateHealth(desired, SERVER, { error: 'connect ECONNREFUSED' }, undefined);
    expect(down.healthy).toBe(false);
    expect(down.problems).toEqual([
      `the Kubernetes API at ${SERVER} does not answer: connect ECONNREFUSED`,
    ]);
    expect(down.nodes.every((n) => n.status === 'Missing')).toBe(true);
    expect(failedReadyzChecks('ok')).toEqual([]);
  });
});
