/**
 * `loko component apply [names...]`: renders and applies components with server-side apply, in
 * dependency order, with live progress on stderr and a report per component on stdout. Without
 * names: every configured component plus the bootstrap ones (what `cluster apply` installs).
 * Re-running with nothing changed changes nothing on the cluster.
 */
import { Command } from 'commander';
import type { ComponentReport } from '../../components/apply.js';
import { summarizeReport } from '../../components/report.js';
import { ExitCode } from '../../util/errors.js';
import { positiveMinutes } from '../cluster/apply.js';
import type { CommandContext, RunAction } from '../shared/context.js';

/** Flags of `component apply`. */
export interface ComponentApplyFlags {
  kubeconfig?: string;
  dryRun?: boolean;
  timeout: number;
}

/** Defines the command. */
export function componentApplyCommand(runAction: RunAction): Command {
  return new Command('apply')
    .description(
      'apply components to the cluster (default: every configured component plus the bootstrap ones), in dependency order',
    )
    .argument('[names...]', 'components to apply (see `loko component list`)')
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: <asset_dir>/auth/kubeconfig of the configured cluster)',
    )
    .option('--dry-run', 'send everything as a server-side dry run: nothing is stored or deleted')
    .option(
      '--timeout <minutes>',
      'give up waiting for rollouts, readiness checks and webhooks after this many minutes',
      positiveMinutes('--timeout'),
      10,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  loko component apply -c examples/quickstart\n  loko component apply metallb --kubeconfig ~/.kube/other-cluster',
    )
    .action((names: string[], opts: ComponentApplyFlags, cmd: Command) =>
      runAction<ComponentApplyFlags>((ctx, o) => applyCommand(ctx, names, o))(opts, cmd),
    );
}

async function applyCommand(
  ctx: CommandContext,
  names: string[],
  opts: ComponentApplyFlags,
): Promise<number> {
  const { requireComponent } = await import('../../components/registry.js');
  for (const n of names) requireComponent(n);
  const s = await import('./session.js');
  const { resolveComponents } = await import('../../components/resolve.js');
  const { applyComponents, checkDependencies } = await import('../../components/apply.js');
  const { printDiagnostics } = await import('../shared/load-config.js');
  const config = await s.loadComponentConfig(ctx);
  const warnings: import('../../config/types.js').Diagnostic[] = [];
  const set = resolveComponents(config.result, {
    ...(names.length > 0 ? { names } : {}),
    includeBootstrap: true,
    warnings,
  });
  await printDiagnostics(ctx, warnings);
  if (set.length === 0) {
    if (ctx.host.format === 'json') ctx.host.json({ components: [] });
    else ctx.host.out('No components to apply: the configuration has no component blocks.');
    return ExitCode.ok;
  }
  const file = await s.kubeconfigFor(ctx, opts.kubeconfig, config.cluster);
  // The cluster block's identity (its Metal API key, Elastic IP tag, project) must never be
  // installed into another cluster: a CCM with them would manage this cluster's Elastic IP and
  // delete the other cluster's nodes as devices it cannot find.
  if (opts.kubeconfig && config.cluster) await s.assertSameCluster(file, config.cluster);
  const client = await s.kubeClientFor(file);
  const lock =
    config.cluster && !opts.kubeconfig ? await takeLock(config.cluster.assetDir) : undefined;
  try {
    // Open for the whole apply: with --emulator, the twin's webhook stand-ins run in it.
    const open = await s.openMetalContext(ctx, config.cluster, 'apply', lock !== undefined);
    const { close: closeMetal, ...metal } = open;
    try {
      const all = new Set([
        ...(await s.clusterComponentNames(config)),
        ...set.map((c) => c.def.name),
      ]);
      const { createRunner } = await import('../shared/runner.js');
      const runner = await createRunner(ctx);
      const timeoutMs = opts.timeout * 60_000;
      const state: { cctx?: import('../../components/types.js').ComponentContext } = {};
      const reports: ComponentReport[] = [];
      const upstream = set.flatMap((c) => c.def.upstream);
      await runner.run(
        [
          {
            title: `Fetch and verify ${upstream.length} upstream manifest${upstream.length === 1 ? '' : 's'}`,
            skip: () => (upstream.length === 0 ? 'no upstream manifests' : false),
            run: async () => {
              state.cctx = await s.componentContextFor(ctx, config, set, all, metal);
            },
          },
          {
            title: 'Check dependencies',
            run: async () => {
              state.cctx ??= await s.componentContextFor(ctx, config, set, all, metal);
              await checkDependencies(client, set);
            },
          },
          ...set.map((c) => ({
            title: `${opts.dryRun ? 'Dry-run' : 'Apply'} ${c.def.name} (${c.def.namespace})`,
            run: async (_: unknown, io: import('../../tasks/phase.js').PhaseIO) => {
              const [report] = await applyComponents(client, [c], state.cctx!, {
                skipDependencyCheck: true,
                signal: io.signal,
                rolloutTimeoutMs: timeoutMs,
                readyTimeoutMs: timeoutMs,
                webhookTimeoutMs: timeoutMs,
                ...(opts.dryRun ? { dryRun: true } : {}),
                onProgress: (e) => {
                  const text = progressText(e);
                  if (text) io.progress.status(text);
                },
              });
              reports.push(report!);
            },
          })),
        ],
        undefined,
        ctx.signal,
      );
      if (ctx.host.format === 'json') {
        ctx.host.json({
          kubeconfig: file,
          dryRun: opts.dryRun ?? false,
          components: reports.map((r) => ({
            name: r.name,
            namespace: r.namespace,
            objects: r.objects,
            created: r.created,
            configured: r.configured,
            unchanged: r.unchanged,
            pruned: r.pruned,
            ...(r.skipped ? { skipped: r.skipped } : {}),
          })),
        });
        return ExitCode.ok;
      }
      for (const line of reportLines(reports, ctx.host.colorOut)) ctx.host.out(line);
      return ExitCode.ok;
    } finally {
      await closeMetal();
    }
  } finally {
    await lock?.release();
  }
}

async function takeLock(assetDir: string): Promise<{ release(): Promise<void> }> {
  const { acquireClusterLock } = await import('../../platforms/equinixmetal/lock.js');
  return acquireClusterLock(assetDir, 'loko component apply');
}

/**
 * One status line for a progress event, or undefined for events not worth a line (each applied
 * object: a non-TTY log prints every status line, and the report counts them).
 */
export function progressText(
  e: import('../../components/apply.js').ComponentProgress,
): string | undefined {
  switch (e.type) {
    case 'start':
      return undefined;
    case 'rendered':
      return `${e.objects} objects rendered`;
    case 'object':
      switch (e.event.type) {
        case 'applied':
          return undefined;
        case 'waiting':
          return `waiting for ${e.event.what}`;
        case 'retrying':
          return `webhook ${e.event.webhook} not serving yet, retrying ${e.event.ref.kind} ${e.event.ref.name}`;
        case 'pruned':
          return `pruned ${e.event.ref.kind} ${e.event.ref.name}`;
      }
      return undefined;
    case 'ready':
      return `waiting: ${e.check}`;
    case 'custom-resources':
      return `applying ${e.objects} custom resources`;
    case 'done':
      return summarizeReport(e.report);
  }
}

/** The per-component table of an apply. */
export function reportLines(
  reports: readonly ComponentReport[],
  c: import('chalk').ChalkInstance,
): string[] {
  const header = [
    'COMPONENT',
    'NAMESPACE',
    'OBJECTS',
    'CREATED',
    'CONFIGURED',
    'UNCHANGED',
    'PRUNED',
  ];
  const rows = reports.map((r) => [
    r.name,
    r.namespace,
    String(r.objects),
    String(r.created),
    String(r.configured),
    String(r.unchanged),
    String(r.pruned),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string =>
    r
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const changed = reports.reduce((n, r) => n + r.created + r.configured + r.pruned, 0);
  const dry = reports.some((r) => r.dryRun);
  return [
    c.bold(fmt(header)),
    ...rows.map(fmt),
    '',
    dry
      ? 'Dry run: nothing was stored or deleted.'
      : changed === 0
        ? 'No changes: every object was already as rendered.'
        : `${changed} object${changed === 1 ? '' : 's'} changed.`,
  ];
}
