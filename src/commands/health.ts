/**
 * `loko health`: the control plane (`/readyz`) and every node the configuration asks for
 * (registered, Ready), through the cluster's admin kubeconfig. Exit 1 naming what is missing or
 * NotReady. Needs no Metal API.
 */
import { Command } from 'commander';
import { ExitCode, LokoError } from '../util/errors.js';
import type { RunAction } from './shared/context.js';

/** Defines the command. */
export function healthCommand(runAction: RunAction): Command {
  return new Command('health')
    .description(
      "show the health of the cluster's control plane and nodes (exit 1 when a node is missing or NotReady)",
    )
    .action(
      runAction(async (ctx) => {
        const { loadClusterConfig } = await import('./shared/load-config.js');
        const p = await import('../platforms/equinixmetal/index.js');
        const { loadKubeconfig } = await import('../kube/index.js');
        const { existsSync } = await import('node:fs');
        const { cluster } = await loadClusterConfig(ctx);
        const file = p.kubeconfigPath(cluster.assetDir);
        if (!existsSync(file)) {
          throw new LokoError(
            `cluster "${cluster.clusterName}" has no kubeconfig yet: ${file} does not exist`,
            { hint: '`loko cluster apply` writes it once the Kubernetes API answers.' },
          );
        }
        const api = await p.clusterApiFromKubeConfig(loadKubeconfig(file));
        const readyz = await api
          .readyz(ctx.signal)
          .catch((err: unknown) => ({ error: p.apiErrorReason(err) }));
        const nodes = await api.listNodes().catch((err: unknown) => {
          ctx.host.debug(`listing nodes failed: ${String(err)}`);
          return undefined;
        });
        const report = p.evaluateHealth(p.desiredState(cluster), api.server, readyz, nodes);

        if (ctx.host.format === 'json') ctx.host.json(report);
        else {
          const c = ctx.host.colorOut;
          const cp = report.controlPlane;
          ctx.host.out(
            `Control plane: ${cp.ready ? c.green('ready') : c.red(`not ready (${cp.detail})`)}  ${report.server}` +
              (cp.failedChecks.length ? `  failed checks: ${cp.failedChecks.join(', ')}` : ''),
          );
          ctx.host.out('');
          const rows = report.nodes.map((n) => [
            n.name,
            n.role === 'controller' ? 'controller' : `worker (${n.pool})`,
            n.status,
            n.detail ?? '',
          ]);
          const header = ['NODE', 'ROLE', 'STATUS', 'DETAIL'];
          const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
          const fmt = (r: string[]) =>
            r
              .map((v, i) => v.padEnd(widths[i]!))
              .join('  ')
              .trimEnd();
          ctx.host.out(`  ${c.bold(fmt(header))}`);
          for (const r of rows) {
            const line = fmt(r);
            ctx.host.out(`  ${r[2] === 'Ready' ? line : c.red(line)}`);
          }
          if (report.unexpected.length > 0)
            ctx.host.out(`\nNot in the configuration: ${report.unexpected.join(', ')}`);
        }
        if (report.healthy) return ExitCode.ok;
        ctx.host.error(
          `cluster "${cluster.clusterName}" is not healthy:\n  ${report.problems.join('\n  ')}`,
        );
        return ExitCode.error;
      }),
    );
}
