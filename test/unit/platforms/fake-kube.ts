/**
 * FakeClusterApi: the cluster's Kubernetes API as apply sees it ({@link ClusterApi}), scripted by
 * tests. `probes` answers the first probes in order, then `ready`; nodes register from a list of
 * names (with `registerAfter` probes of listNodes), Ready when `ready` says so; minted tokens are
 * recorded with the Secret apply would send.
 */
import type { KubeconfigSpec } from '../../../src/kube/kubeconfig.js';
import type { BootstrapToken } from '../../../src/pki/index.js';
import {
  bootstrapTokenSecret,
  type ApiProbe,
  type ClusterApi,
  type ConnectClusterApi,
  type NodeStatus,
} from '../../../src/platforms/equinixmetal/kubernetes.js';

export class FakeClusterApi implements ClusterApi {
  server = 'https://unset:6443';
  /** Answers of the first probes, in order; afterwards the API is ready. */
  probes: ApiProbe[] = [];
  /** Never ready (a remote endpoint without a control plane). */
  down = false;
  probeCount = 0;
  /** Registered node names and whether each is Ready. */
  nodes = new Map<string, { ready: boolean; labels?: Record<string, string> }>();
  listCount = 0;
  /** Called on each listNodes before answering (e.g. to register nodes over time). */
  onList?: (n: number) => void;
  readonly minted: Array<{ token: BootstrapToken; expires: Date; secret: unknown }> = [];
  /** The specs connect() was called with. */
  readonly specs: KubeconfigSpec[] = [];

  readonly connect: ConnectClusterApi = async (spec) => {
    this.specs.push(spec);
    this.server = spec.server;
    return this;
  };

  async probe(): Promise<ApiProbe> {
    this.probeCount++;
    if (this.down) return { ready: false, state: 'ECONNREFUSED: connect ECONNREFUSED' };
    return this.probes.shift() ?? { ready: true };
  }

  async readyz(): Promise<{ status: number; body: string }> {
    return { status: 200, body: '[+]ping ok\nreadyz check passed\n' };
  }

  async listNodes(): Promise<NodeStatus[]> {
    this.onList?.(++this.listCount);
    return [...this.nodes].map(([name, n]) => ({
      name,
      ready: n.ready,
      ...(n.ready ? {} : { detail: 'KubeletNotReady: container runtime network not ready' }),
      labels: n.labels ?? {},
      taints: [],
    }));
  }

  async createBootstrapToken(token: BootstrapToken, expires: Date): Promise<void> {
    this.minted.push({ token, expires, secret: bootstrapTokenSecret(token, expires) });
  }

  /** Registers every name, Ready or not. */
  register(names: string[], ready = true): void {
    for (const n of names) this.nodes.set(n, { ready });
  }
}
