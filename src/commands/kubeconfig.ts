/**
 * `loko kubeconfig`: prints the cluster's admin kubeconfig (`<asset_dir>/auth/kubeconfig`, written
 * by `cluster apply`), or merges it into `~/.kube/config` (or a given file) with an explicit
 * policy for names already taken: never silently overwriting a context.
 */
import { Command, Option } from 'commander';
import { ExitCode, LokoError } from '../util/errors.js';
import type { CommandContext, RunAction } from './shared/context.js';

interface KubeconfigFlags {
  merge?: string | true;
  /** Unset means `fail`. */
  onConflict?: 'fail' | 'rename' | 'overwrite';
}

/** Defines the command. */
export function kubeconfigCommand(runAction: RunAction): Command {
  return new Command('kubeconfig')
    .description(
      "print the cluster's admin kubeconfig, or merge it into ~/.kube/config (--merge [file])",
    )
    .option(
      '--merge [file]',
      'merge into this kubeconfig file instead of printing (default: ~/.kube/config)',
    )
    .addOption(
      new Option(
        '--on-conflict <policy>',
        'with --merge, when a cluster, user or context name is taken by a different entry: fail (default), rename ours, or overwrite theirs',
      ).choices(['fail', 'rename', 'overwrite']),
    )
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  loko kubeconfig -c examples/quickstart > quickstart.kubeconfig',
        '  loko kubeconfig -c examples/quickstart --merge',
        '  loko kubeconfig -c examples/quickstart --merge ~/.kube/work --on-conflict rename',
      ].join('\n'),
    )
    .action(
      runAction<KubeconfigFlags>(async (ctx, opts) => {
        const source = await readClusterKubeconfig(ctx);
        if (opts.merge === undefined) {
          if (opts.onConflict !== undefined) {
            throw new LokoError('--on-conflict only applies with --merge', {
              hint: 'Add --merge to merge into ~/.kube/config, or drop --on-conflict.',
            });
          }
          if (ctx.host.format === 'json')
            ctx.host.json({ path: source.path, kubeconfig: source.text });
          else ctx.host.streams.stdout.write(source.text);
          return ExitCode.ok;
        }
        return merge(ctx, source, opts);
      }),
    );
}

/** The cluster's kubeconfig: path and text. LokoError when apply has not written it yet. */
async function readClusterKubeconfig(ctx: CommandContext): Promise<{ path: string; text: string }> {
  const { loadClusterConfig } = await import('./shared/load-config.js');
  const { kubeconfigPath } = await import('../platforms/equinixmetal/machine-bootstrap.js');
  const { readFile } = await import('node:fs/promises');
  const { cluster } = await loadClusterConfig(ctx);
  const path = kubeconfigPath(cluster.assetDir);
  try {
    return { path, text: await readFile(path, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new LokoError(
      `cluster "${cluster.clusterName}" has no kubeconfig yet: ${path} does not exist`,
      {
        hint: '`loko cluster apply` writes it once the Kubernetes API answers.',
      },
    );
  }
}

async function merge(
  ctx: CommandContext,
  source: { path: string; text: string },
  opts: KubeconfigFlags,
): Promise<number> {
  const path = await import('node:path');
  const { homedir } = await import('node:os');
  const { readFile } = await import('node:fs/promises');
  const { mergeKubeconfig, writeKubeconfig, KubeconfigConflictError } =
    await import('../kube/index.js');
  const target =
    typeof opts.merge === 'string'
      ? path.resolve(ctx.cwd, opts.merge)
      : path.join(ctx.env.HOME || homedir(), '.kube', 'config');
  let existing: string | undefined;
  try {
    existing = await readFile(target, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let result;
  try {
    result = mergeKubeconfig(existing, source.text, opts.onConflict ?? 'fail', target);
  } catch (err) {
    if (err instanceof KubeconfigConflictError) {
      throw new LokoError(`not merged: ${err.message}`, {
        hint: 'Nothing was written. Use --on-conflict rename to add the cluster under new names, or --on-conflict overwrite to replace those entries.',
      });
    }
    throw err;
  }
  const changed = result.changes.some((c) => c.action !== 'unchanged');
  if (changed || existing === undefined) await writeKubeconfig(target, result.text);
  if (ctx.host.format === 'json') {
    ctx.host.json({
      file: target,
      written: changed || existing === undefined,
      context: result.context,
      currentContext: result.currentContext,
      changes: result.changes,
    });
    return ExitCode.ok;
  }
  for (const c of result.changes) {
    const what = c.action === 'renamed' ? `added as "${c.name}" ("${c.from}" is taken)` : c.action;
    ctx.host.out(`${c.kind.padEnd(7)} ${(c.from ?? c.name).padEnd(30)} ${what}`);
  }
  ctx.host.out(
    changed || existing === undefined
      ? `Merged into ${target}.`
      : `${target} already has this cluster; nothing written.`,
  );
  ctx.host.out(
    result.currentContext === result.context
      ? `Current context: ${result.context}`
      : `Use it with: kubectl config use-context ${result.context}   (or --context ${result.context})`,
  );
  return ExitCode.ok;
}
