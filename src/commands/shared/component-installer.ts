/**
 * The platform's {@link ComponentInstaller} built from src/components for `cluster apply`: the
 * bootstrap components (CCM, CNI) and the configured others, resolved once from the loaded
 * configuration, each stage rendered with the cluster's facts as apply learns them (kubeconfig,
 * project API key, control-plane Elastic IP) and applied with the one applier.
 */
import type { ConfiguredComponent } from '../../components/resolve.js';
import type { ClusterConfig, LoadResult } from '../../config/types.js';
import type {
  AppliedComponent,
  ComponentInstaller,
  ComponentStage,
} from '../../platforms/equinixmetal/apply.js';

/**
 * Resolves every component of the configuration (bootstrap ones always, configured ones) and
 * returns the installer. Throws ComponentConfigError (with file:line diagnostics) before any
 * change when a component block is invalid.
 */
export async function createComponentInstaller(input: {
  cluster: ClusterConfig;
  result: Pick<LoadResult, 'components'>;
  env: Record<string, string | undefined>;
  /** The embedded emulator: manifests only from caches, `manifest_dir` or a loopback mirror. */
  emulator?: boolean;
  /** Budget of each wait (rollouts, readiness checks, webhook retries): apply's `--timeout`. */
  timeoutMs: number;
}): Promise<ComponentInstaller> {
  const { resolveComponents } = await import('../../components/resolve.js');
  const set = resolveComponents(input.result, { includeBootstrap: true });
  const stageOf = (c: ConfiguredComponent): ComponentStage =>
    c.def.bootstrap ? 'bootstrap' : 'other';
  const all = set.map((c) => c.def.name);
  const c = input.cluster;
  return {
    names: (stage) => set.filter((x) => stageOf(x) === stage).map((x) => x.def.name),
    async apply(stage, facts, report, signal): Promise<AppliedComponent[]> {
      const chosen = set.filter((x) => stageOf(x) === stage);
      if (chosen.length === 0) return [];
      const [{ buildComponentContext }, { applyComponents }, { summarizeReport }, { KubeClient }] =
        await Promise.all([
          import('../../components/context.js'),
          import('../../components/apply.js'),
          import('../../components/report.js'),
          import('../../kube/client.js'),
        ]);
      for (const x of chosen) report(x.def.name, 'running', 'fetching manifests');
      const cctx = await buildComponentContext({
        set: chosen,
        env: input.env,
        ...(input.emulator ? { loopbackOnly: true } : {}),
        signal,
        components: all,
        assetDir: c.assetDir,
        clusterName: c.clusterName,
        projectId: c.projectId,
        metro: c.metro,
        podCidr: c.podCidr,
        serviceCidr: c.serviceCidr,
        ...(c.manifestMirror ? { manifestMirror: c.manifestMirror } : {}),
        ...(c.manifestDir ? { manifestDir: c.manifestDir } : {}),
        ...(facts.metalApiKey ? { metalApiKey: facts.metalApiKey } : {}),
        ...(facts.endpoint ? { controlPlaneEndpoint: facts.endpoint } : {}),
      });
      const client = KubeClient.fromFile(facts.kubeconfig);
      const applied: AppliedComponent[] = [];
      let current: string | undefined;
      try {
        await applyComponents(client, chosen, cctx, {
          signal,
          // Every component of the cluster is in this apply: the dependency check is by order.
          skipDependencyCheck: true,
          // The bootstrap components are awaited by the nodes' Ready wait that follows them (a
          // rollout of the CNI cannot finish before the nodes it makes Ready).
          ...(stage === 'other' ? { rolloutTimeoutMs: input.timeoutMs } : {}),
          readyTimeoutMs: input.timeoutMs,
          webhookTimeoutMs: input.timeoutMs,
          onProgress: (e) => {
            if (e.type === 'start') {
              current = e.component;
              report(e.component, 'running', 'applying');
            } else if (e.type === 'ready') report(e.component, 'running', `waiting: ${e.check}`);
            else if (e.type === 'custom-resources')
              report(e.component, 'running', `custom resources (${e.objects})`);
            else if (e.type === 'object' && e.event.type === 'retrying')
              report(e.component, 'running', `webhook ${e.event.webhook} not serving yet`);
            else if (e.type === 'object' && e.event.type === 'waiting')
              report(e.component, 'running', `waiting for ${e.event.what}`);
            else if (e.type === 'done') {
              const detail = summarizeReport(e.report);
              applied.push({ name: e.component, detail });
              report(e.component, 'done', detail);
            }
          },
        });
      } catch (err) {
        if (current && !applied.some((a) => a.name === current)) report(current, 'failed');
        throw err;
      }
      return applied;
    },
  };
}
