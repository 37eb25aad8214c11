/**
 * `loko cluster plan`: read the cluster's devices by tag, run preflight, print what apply would do.
 * Exit 2 when changes are pending, 0 when none (Terraform's -detailed-exitcode).
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { ApplyContext } from '../../platforms/equinixmetal/apply.js';
import type { RunAction } from '../shared/context.js';

/** Defines the command. */
export function clusterPlanCommand(runAction: RunAction): Command {
  return new Command('plan')
    .description(
      'show what `cluster apply` would change (exit 2 when changes are pending, 0 when none)',
    )
    .option('--allow-replace', 'mark replacements as allowed in the output')
    .action(
      runAction<{ allowReplace?: boolean }>(async (ctx, opts) => {
        const { withClusterSession } = await import('../shared/session.js');
        const { createRunner, pollFor } = await import('../shared/runner.js');
        const { planLines, planJson } = await import('../shared/render-plan.js');
        const p = await import('../../platforms/equinixmetal/index.js');

        return withClusterSession(
          ctx,
          'loko cluster plan',
          'emulator',
          async ({ cluster, result, metal }) => {
            const executor = p.createExecutor({ api: metal.api, dryRun: true, signal: ctx.signal });
            const actx = p.createApplyContext({
              api: metal.api,
              cluster,
              sources: result.sources,
              executor,
              options: { allowReplace: opts.allowReplace ?? false, poll: pollFor(metal.timeScale) },
            });
            const runner = await createRunner(ctx);
            await runner.run(p.planPhases, actx, ctx.signal);
            const plan = actx.plan!;
            if (ctx.host.format === 'json') {
              ctx.host.json({
                ...planJson(plan),
                mutations: await dryRunMutations(actx, ctx.signal),
              });
            } else
              for (const line of planLines(plan, ctx.host.colorOut, opts.allowReplace ?? false))
                ctx.host.out(line);
            return plan.changes ? ExitCode.changesPending : ExitCode.ok;
          },
        );
      }),
    );
}

/**
 * The API writes apply would make, from running apply's own phases with the dry-run executor
 * (no API calls: waits are skipped in dry-run). `null` when apply would refuse replacements.
 */
async function dryRunMutations(
  actx: ApplyContext,
  signal: AbortSignal,
): Promise<Array<{ call: string; description: string }> | null> {
  const p = await import('../../platforms/equinixmetal/index.js');
  const { createPlainRunner } = await import('../../tasks/phase.js');
  if (p.refusedReplacements(actx.plan!, actx.options.allowReplace).length > 0) return null;
  await createPlainRunner().run(p.applyPhases, actx, signal);
  const { mutationJson } = await import('../shared/render-plan.js');
  return actx.executor.recorded.map(mutationJson);
}
