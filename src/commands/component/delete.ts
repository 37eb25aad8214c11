/**
 * `loko component delete <names...>`: removes exactly the objects loko applied for the named
 * components (found by their loko labels), keeping each component's namespace unless
 * `--delete-namespace`. Asks for confirmation (or `--yes`; refuses on a non-TTY without it).
 * Re-running deletes nothing and succeeds.
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { CommandContext, RunAction } from '../shared/context.js';

/** Flags of `component delete`. */
export interface ComponentDeleteFlags {
  kubeconfig?: string;
  deleteNamespace?: boolean;
}

/** Defines the command. */
export function componentDeleteCommand(runAction: RunAction): Command {
  return new Command('delete')
    .description('delete what loko applied for the named components (keeps their namespaces)')
    .argument('<names...>', 'components to delete (see `loko component list`)')
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: <asset_dir>/auth/kubeconfig of the configured cluster)',
    )
    .option('--delete-namespace', "also delete the components' Namespace objects")
    .addHelpText(
      'after',
      '\nExample:\n  loko component delete metallb -c examples/quickstart --yes',
    )
    .action((names: string[], opts: ComponentDeleteFlags, cmd: Command) =>
      runAction<ComponentDeleteFlags>((ctx, o) => deleteCommand(ctx, names, o))(opts, cmd),
    );
}

async function deleteCommand(
  ctx: CommandContext,
  names: string[],
  opts: ComponentDeleteFlags,
): Promise<number> {
  const { requireComponent } = await import('../../components/registry.js');
  for (const n of names) requireComponent(n);
  const s = await import('./session.js');
  const { dependencyOrder } = await import('../../components/resolve.js');
  const { deleteComponents } = await import('../../components/delete.js');
  const { confirm } = await import('../../tasks/prompt.js');
  const config = await s.loadComponentConfig(ctx);
  // Delete finds the objects by their labels: it needs no decoded config, so a component without
  // a block (metallb needs one to render) can still be removed.
  const set = dependencyOrder(names.map((n) => requireComponent(n))).map((def) => ({
    def,
    config: undefined,
    configured: config.result.components.has(def.name),
  }));
  const file = await s.kubeconfigFor(ctx, opts.kubeconfig, config.cluster);
  const client = await s.kubeClientFor(file);
  const bootstrap = set.filter((c) => c.def.bootstrap).map((c) => c.def.name);
  if (bootstrap.length > 0)
    ctx.host.warn(
      `${bootstrap.join(', ')} ${bootstrap.length === 1 ? 'is a bootstrap component' : 'are bootstrap components'}: the cluster needs ${bootstrap.length === 1 ? 'it' : 'them'}, and the next \`loko cluster apply\` installs ${bootstrap.length === 1 ? 'it' : 'them'} again.`,
    );
  await confirm(ctx.host, {
    question: `Delete every object loko applied for ${set.map((c) => `"${c.def.name}"`).join(', ')} on ${client.server}${opts.deleteNamespace ? ', including their namespaces' : ''}?`,
    action: `delete ${names.join(', ')}`,
    yes: ctx.globals.yes,
  });
  const lock =
    config.cluster && !opts.kubeconfig
      ? await (
          await import('../../platforms/equinixmetal/lock.js')
        ).acquireClusterLock(config.cluster.assetDir, 'loko component delete')
      : undefined;
  try {
    const { createRunner } = await import('../shared/runner.js');
    const runner = await createRunner(ctx);
    const reports: import('../../components/delete.js').ComponentDeleteReport[] = [];
    await runner.run(
      [...set].reverse().map((c) => ({
        title: `Delete ${c.def.name}`,
        run: async (_: unknown, io: import('../../tasks/phase.js').PhaseIO) => {
          reports.push(
            ...(await deleteComponents(client, [c], {
              signal: io.signal,
              ...(opts.deleteNamespace ? { deleteNamespace: true } : {}),
              onProgress: ({ event }) => {
                if (event.type === 'pruned')
                  io.progress.status(`deleted ${event.ref.kind} ${event.ref.name}`);
              },
            })),
          );
        },
      })),
      undefined,
      ctx.signal,
    );
    if (ctx.host.format === 'json') {
      ctx.host.json({
        components: reports.map((r) => ({
          name: r.name,
          namespace: r.namespace,
          deleted: r.deleted.map((d) => ({
            apiVersion: d.apiVersion,
            kind: d.kind,
            name: d.name,
            ...(d.namespace ? { namespace: d.namespace } : {}),
          })),
          keptNamespace: r.keptNamespace,
        })),
      });
      return ExitCode.ok;
    }
    for (const r of reports) {
      ctx.host.out(
        r.deleted.length === 0
          ? `${r.name}: nothing to delete (no objects loko applied for it).`
          : `${r.name}: deleted ${r.deleted.length} object${r.deleted.length === 1 ? '' : 's'}${r.keptNamespace ? `; namespace ${r.namespace} kept` : ''}.`,
      );
    }
    return ExitCode.ok;
  } finally {
    await lock?.release();
  }
}
