/**
 * Cluster health as `loko health` reports it and the last apply phases wait for: the control
 * plane (`/readyz?verbose`) and every node the configuration asks for (registered, Ready). Pure.
 */
import type { DesiredState } from './desired.js';
import type { NodeStatus } from './kubernetes.js';

/** One expected node and what the API says about it. */
export interface NodeHealth {
  name: string;
  role: 'controller' | 'worker';
  pool?: string;
  status: 'Ready' | 'NotReady' | 'Missing';
  /** Why it is not Ready (the Ready condition's reason and message). */
  detail?: string;
}

/** What `loko health` prints (`-o json` is this object). */
export interface HealthReport {
  healthy: boolean;
  /** `https://<endpoint>:6443`. */
  server: string;
  controlPlane: {
    ready: boolean;
    /** `ok`, or what failed (`HTTP 500`, `ECONNREFUSED: …`). */
    detail: string;
    /** `/readyz` checks that failed, e.g. `etcd`. */
    failedChecks: string[];
  };
  nodes: NodeHealth[];
  /** Registered nodes the configuration does not ask for (not counted as a problem). */
  unexpected: string[];
  /** One line per problem, e.g. `node demo-general-1 is NotReady: KubeletNotReady: …`. */
  problems: string[];
}

/** The `/readyz?verbose` answer, or why there was none. */
export type ReadyzResult = { status: number; body: string } | { error: string };

/** Failed checks of a `/readyz?verbose` body: lines `[-]<name> failed: …`. */
export function failedReadyzChecks(body: string): string[] {
  return body
    .split('\n')
    .map((l) => /^\[-\]([^ ]+)/.exec(l.trim())?.[1])
    .filter((x): x is string => x !== undefined);
}

/**
 * Evaluates the cluster against the configuration. `nodes` is undefined when the node list could
 * not be read (the API is down): every expected node is then reported as not known.
 */
export function evaluateHealth(
  desired: Pick<DesiredState, 'devices'>,
  server: string,
  readyz: ReadyzResult,
  nodes: NodeStatus[] | undefined,
): HealthReport {
  const problems: string[] = [];
  let controlPlane: HealthReport['controlPlane'];
  if ('error' in readyz) {
    controlPlane = { ready: false, detail: readyz.error, failedChecks: [] };
    problems.push(`the Kubernetes API at ${server} does not answer: ${readyz.error}`);
  } else {
    const failedChecks = failedReadyzChecks(readyz.body);
    const ready = readyz.status === 200;
    controlPlane = {
      ready,
      detail: ready ? 'ok' : `HTTP ${readyz.status}`,
      failedChecks,
    };
    if (!ready) {
      problems.push(
        `the control plane is not ready (/readyz HTTP ${readyz.status}${
          failedChecks.length ? `; failed: ${failedChecks.join(', ')}` : ''
        })`,
      );
    }
  }

  const byName = new Map((nodes ?? []).map((n) => [n.name, n]));
  const expected = new Set(desired.devices.map((d) => d.hostname));
  const report: NodeHealth[] = desired.devices.map((d) => {
    const n = byName.get(d.hostname);
    const base = { name: d.hostname, role: d.role, ...(d.pool ? { pool: d.pool } : {}) };
    if (!n) {
      return {
        ...base,
        status: 'Missing' as const,
        detail: nodes ? 'not registered' : 'unknown: nodes could not be listed',
      };
    }
    return n.ready
      ? { ...base, status: 'Ready' as const }
      : { ...base, status: 'NotReady' as const, detail: n.detail ?? 'not Ready' };
  });
  const missing = report.filter((n) => n.status === 'Missing');
  const notReady = report.filter((n) => n.status === 'NotReady');
  if (nodes && missing.length > 0) {
    problems.push(
      `${missing.length} node${missing.length === 1 ? ' is' : 's are'} missing: ${missing.map((n) => n.name).join(', ')}`,
    );
  }
  for (const n of notReady) problems.push(`node ${n.name} is NotReady: ${n.detail}`);
  return {
    healthy: problems.length === 0,
    server,
    controlPlane,
    nodes: report,
    unexpected: (nodes ?? []).map((n) => n.name).filter((n) => !expected.has(n)),
    problems,
  };
}
