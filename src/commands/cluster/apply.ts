/**
 * `loko cluster apply`: plan, show, confirm (or `--yes`), then create/update/delete devices in
 * parallel with a bound, wait until all are active (listing by tag), and print the summary.
 */
import { Command, InvalidArgumentError } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { RunAction } from '../shared/context.js';

/** Options of `cluster apply`. */
export interface ApplyFlags {
  allowReplace?: boolean;
  parallelism: number;
  timeout: number;
}

/** Parses a positive integer flag value. */
export function positiveInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`${flag} must be a positive integer`);
    return n;
  };
}

/** Defines the command. */
export function clusterApplyCommand(runAction: RunAction): Command {
  return new Command('apply')
    .description("create or update the cluster's machines to match the configuration")
    .option(
      '--allow-replace',
      'allow replacing devices whose plan, OS or metro changed (deletes them)',
    )
    .option(
      '--parallelism <n>',
      'device API calls in flight at most',
      positiveInt('--parallelism'),
      10,
    )
    .option(
      '--timeout <minutes>',
      'give up waiting for devices after this many minutes',
      positiveInt('--timeout'),
      30,
    )
    .action(
      runAction<ApplyFlags>(async (ctx, opts) => {
        const { withClusterSession } = await import('../shared/session.js');
        const { createRunner, pollFor } = await import('../shared/runner.js');
        const { planLines, planJson, mutationJson } = await import('../shared/render-plan.js');
        const { summaryLines } = await import('../shared/render-summary.js');
        const { confirm } = await import('../../tasks/prompt.js');
        const p = await import('../../platforms/equinixmetal/index.js');

        return withClusterSession(
          ctx,
          'loko cluster apply',
          'always',
          async ({ cluster, result, metal }) => {
            const executor = p.createExecutor({
              api: metal.api,
              signal: ctx.signal,
              debug: (m) => ctx.host.debug(m),
            });
            const actx = p.createApplyContext({
              api: metal.api,
              cluster,
              sources: result.sources,
              executor,
              options: {
                allowReplace: opts.allowReplace ?? false,
                parallelism: opts.parallelism,
                poll: pollFor(metal.timeScale, opts.timeout),
              },
            });
            const runner = await createRunner(ctx);
            await runner.run(p.planPhases, actx, ctx.signal);
            const plan = actx.plan!;
            if (plan.changes) {
              for (const line of planLines(plan, ctx.host.color, opts.allowReplace ?? false))
                ctx.host.info(line);
              p.assertReplacementsAllowed(plan, opts.allowReplace ?? false);
              await confirm(ctx.host, {
                question: `Apply these changes to cluster "${cluster.clusterName}"?`,
                action: 'apply the changes',
                yes: ctx.globals.yes,
              });
            }
            await runner.run(p.applyPhases, actx, ctx.signal);
            const summary = actx.summary!;

            if (ctx.host.format === 'json') {
              ctx.host.json({
                ...planJson(plan),
                mutations: executor.recorded.map(mutationJson),
                summary,
                summaryFile: actx.summaryFile,
              });
              return ExitCode.ok;
            }
            for (const line of summaryLines(summary, ctx.host.colorOut)) ctx.host.out(line);
            const flags = reRunFlags(ctx);
            ctx.host.out(`Assets:  ${cluster.assetDir}`);
            ctx.host.out(`Summary: ${actx.summaryFile}`);
            ctx.host.out('');
            ctx.host.out('Next:');
            ctx.host.out(`  loko cluster plan${flags}      # should report no changes`);
            ctx.host.out(`  loko cluster destroy${flags}   # removes every device of the cluster`);
            ctx.host.out(
              '  (Kubernetes bootstrap and a kubeconfig come in a later version; the machines run a placeholder userdata.)',
            );
            return ExitCode.ok;
          },
        );
      }),
    );
}

/** The flags to repeat in suggested follow-up commands (config location and endpoint). */
function reRunFlags(ctx: Parameters<Parameters<RunAction>[0]>[0]): string {
  const parts: string[] = [];
  if (ctx.globals.config !== '.') parts.push(`-c ${ctx.globals.config}`);
  if (ctx.globals.emulator) parts.push('--emulator');
  else if (ctx.globals.apiUrl) parts.push(`--api-url ${ctx.globals.apiUrl}`);
  return parts.length ? ` ${parts.join(' ')}` : '';
}
