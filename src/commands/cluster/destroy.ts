/**
 * `loko cluster destroy`: show everything tagged with the cluster, confirm (or `--yes`), delete
 * devices then IP reservations, wait until they are gone, and fail listing anything left. With
 * `--emulator`, also stops the emulator's Kubernetes twin (its processes outlive each run).
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { RunAction } from '../shared/context.js';
import { positiveInt } from './apply.js';

/** Defines the command. */
export function clusterDestroyCommand(runAction: RunAction): Command {
  return new Command('destroy')
    .description('delete every device and IP reservation tagged with the cluster')
    .option('--parallelism <n>', 'delete calls in flight at most', positiveInt('--parallelism'), 10)
    .option(
      '--timeout <minutes>',
      'give up waiting for devices to go after this many minutes',
      positiveInt('--timeout'),
      30,
    )
    .action(
      runAction<{ parallelism: number; timeout: number }>(
        async (ctx, opts) => {
          const { withClusterSession } = await import('../shared/session.js');
          const { createRunner, pollFor } = await import('../shared/runner.js');
          const { confirm } = await import('../../tasks/prompt.js');
          const p = await import('../../platforms/equinixmetal/index.js');

          return withClusterSession(
            ctx,
            'loko cluster destroy',
            'always',
            async ({ cluster, metal }) => {
              /** The machines are gone: so is the Kubernetes the twin played on them. */
              const stopTwin = async (): Promise<void> => {
                if (!ctx.globals.emulator) return;
                const { stopEmulatorTwin } = await import('../shared/twin.js');
                const n = await stopEmulatorTwin(cluster.assetDir);
                if (n > 0)
                  ctx.host.debug(`stopped the emulator's Kubernetes twin (${n} processes)`);
              };
              const executor = p.createExecutor({
                api: metal.api,
                signal: ctx.signal,
                debug: (m) => ctx.host.debug(m),
              });
              const dctx = p.createDestroyContext({
                api: metal.api,
                executor,
                // The cluster's project API key (the CCM's credentials) goes with it.
                apiKeys: { api: metal.api, executor: p.apiKeyExecutor(executor) },
                clusterName: cluster.clusterName,
                projectId: cluster.projectId,
                options: {
                  parallelism: opts.parallelism,
                  poll: pollFor(metal.timeScale, opts.timeout),
                },
              });
              const runner = await createRunner(ctx);
              await runner.run(p.inventoryPhases, dctx, ctx.signal);
              const inv = dctx.inventory!;
              if (p.isEmpty(inv)) {
                await stopTwin();
                if (ctx.host.format === 'json')
                  ctx.host.json({
                    cluster: cluster.clusterName,
                    deleted: { devices: [], reservations: [], apiKeys: [] },
                  });
                else
                  ctx.host.out(
                    `Nothing to destroy: nothing in project ${cluster.projectId} is tagged ${dctx.tag}.`,
                  );
                return ExitCode.ok;
              }

              ctx.host.info(`Cluster "${cluster.clusterName}" owns (tag ${dctx.tag}):`);
              const w = Math.max(...inv.devices.map((d) => d.hostname.length), 0);
              for (const d of inv.devices)
                ctx.host.info(
                  `  device          ${d.hostname.padEnd(w)}  ${d.state.padEnd(14)}  ${d.id}`,
                );
              for (const r of inv.reservations)
                ctx.host.info(`  IP reservation  ${p.reservationLabel(r)}  ${r.id}`);
              for (const k of inv.apiKeys ?? [])
                ctx.host.info(`  API key         ${k.description}  ${k.id}`);
              await confirm(ctx.host, {
                question: `WARNING: this cannot be undone. Destroy cluster "${cluster.clusterName}" (${inv.devices.length} devices, ${inv.reservations.length} IP reservations)?`,
                action: 'destroy the cluster',
                yes: ctx.globals.yes,
              });
              await runner.run(p.destroyPhases, dctx, ctx.signal);
              await stopTwin();

              const deleted = {
                devices: inv.devices.map((d) => ({ hostname: d.hostname, id: d.id })),
                reservations: inv.reservations.map((r) => ({
                  id: r.id,
                  network: p.reservationLabel(r),
                })),
                apiKeys: (inv.apiKeys ?? []).map((k) => ({ id: k.id, description: k.description })),
              };
              if (ctx.host.format === 'json') {
                ctx.host.json({ cluster: cluster.clusterName, deleted });
              } else {
                ctx.host.out(
                  `Destroyed cluster "${cluster.clusterName}": ${count(deleted.devices.length, 'device')}, ${count(deleted.reservations.length, 'IP reservation')} and ${count(deleted.apiKeys.length, 'API key')} deleted.`,
                );
                ctx.host.out(
                  `The asset directory ${cluster.assetDir} is kept; remove it when you no longer need it.`,
                );
              }
              return ExitCode.ok;
            },
          );
        },
        {
          interruptHint:
            'Run the same command again; it deletes what is left (devices and IP reservations already deleted stay deleted).',
        },
      ),
    );
}

/** `1 device`, `2 devices`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
