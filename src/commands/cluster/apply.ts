/**
 * `loko cluster apply`: plan, show, confirm (or `--yes`), then the control-plane Elastic IP, the
 * machines (in parallel with a bound, waiting until all are active, listing by tag), and the
 * Kubernetes phases: wait for the API, write the admin kubeconfig, wait for the nodes. Prints the
 * summary and the next command to run.
 */
import { Command, InvalidArgumentError } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { KubernetesMode } from '../../platforms/equinixmetal/apply.js';
import type { CommandContext, RunAction } from '../shared/context.js';
import type { MetalConnection } from '../shared/endpoint.js';

/** Options of `cluster apply`. */
export interface ApplyFlags {
  allowReplace?: boolean;
  machinesOnly?: boolean;
  skipComponents?: boolean;
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

/** Parses a positive number of minutes (`0.5` is 30 s). */
export function positiveMinutes(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(
        `${flag} must be a positive number of minutes, for example 30`,
      );
    return n;
  };
}

/** Defines the command. */
export function clusterApplyCommand(runAction: RunAction): Command {
  return new Command('apply')
    .description(
      'create or update the machines to match the configuration, then wait for Kubernetes on them',
    )
    .option(
      '--allow-replace',
      'allow replacing devices whose plan, OS or metro changed (deletes them)',
    )
    .option(
      '--machines-only',
      'stop once the machines are active: do not wait for the Kubernetes API or the nodes',
    )
    .option(
      '--skip-components',
      'do not apply the configured components (the bootstrap ones, CCM and CNI, are always applied)',
    )
    .option(
      '--parallelism <n>',
      'device API calls in flight at most',
      positiveInt('--parallelism'),
      10,
    )
    .option(
      '--timeout <minutes>',
      'give up each wait (devices active, Kubernetes API, nodes) after this many minutes',
      positiveMinutes('--timeout'),
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
            const kubernetes = kubernetesMode(opts, metal);
            if (kubernetes.mode === 'skip' && !opts.machinesOnly) ctx.host.info(kubernetes.reason);
            // Resolved before any change: an invalid component block stops the run here.
            const { createComponentInstaller } = await import('../shared/component-installer.js');
            const components = await createComponentInstaller({
              cluster,
              result,
              env: ctx.env,
              emulator: ctx.globals.emulator,
              timeoutMs: opts.timeout * 60_000,
            });
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
                // The Kubernetes API is real (the twin too): its waits run on real time.
                kubePoll: { ...p.DEFAULT_KUBE_POLL, timeoutMs: opts.timeout * 60_000 },
                kubernetes,
                components,
                skipComponents: opts.skipComponents ?? false,
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
            await runner.run(
              kubernetes.mode === 'wait' ? p.applyPhases : p.machinePhases,
              actx,
              ctx.signal,
            );
            const summary = actx.summary!;
            const api = p.apiServerUrl(actx);
            const kube =
              kubernetes.mode === 'wait'
                ? {
                    api,
                    kubeconfig: actx.kubeconfig,
                    nodes: (actx.nodes ?? []).map((n) => ({ name: n.name, ready: n.ready })),
                  }
                : { api, skipped: kubernetes.reason };

            if (ctx.host.format === 'json') {
              ctx.host.json({
                ...planJson(plan),
                mutations: executor.recorded.map(mutationJson),
                summary,
                summaryFile: actx.summaryFile,
                kubernetes: kube,
              });
              return ExitCode.ok;
            }
            for (const line of summaryLines(summary, ctx.host.colorOut)) ctx.host.out(line);
            const flags = reRunFlags(ctx);
            ctx.host.out(`Assets:      ${cluster.assetDir}`);
            ctx.host.out(`Summary:     ${actx.summaryFile}`);
            if (api) ctx.host.out(`Kubernetes:  ${api}`);
            if (actx.kubeconfig) ctx.host.out(`Kubeconfig:  ${actx.kubeconfig}`);
            else
              ctx.host.out(
                `Kubernetes phases skipped: ${opts.machinesOnly ? '--machines-only' : "the emulator's Kubernetes twin is off"}.`,
              );
            ctx.host.out('');
            ctx.host.out('Next:');
            if (actx.kubeconfig) {
              ctx.host.out(`  kubectl --kubeconfig ${actx.kubeconfig} get nodes`);
              ctx.host.out(`  loko health${flags}             # nodes and control plane`);
            }
            ctx.host.out(`  loko cluster plan${flags}       # should report no changes`);
            ctx.host.out(`  loko cluster destroy${flags}    # removes everything the cluster owns`);
            return ExitCode.ok;
          },
        );
      }),
    );
}

/**
 * After the machines: `--machines-only` stops there; with `--emulator`, the Kubernetes phases
 * run only when the emulator's Kubernetes twin is on; against any other endpoint apply waits for
 * the API (and fails after `--timeout` naming what it waited for).
 */
function kubernetesMode(opts: ApplyFlags, metal: MetalConnection): KubernetesMode {
  if (opts.machinesOnly) return { mode: 'skip', reason: '--machines-only', apiExpected: true };
  if (metal.kind !== 'emulator' || !metal.twin || metal.twin.enabled) return { mode: 'wait' };
  return {
    mode: 'skip',
    reason: `${metal.twin.reason}. Provisioning the machines only; the Kubernetes phases are skipped.`,
    apiExpected: false,
  };
}

/** The flags to repeat in suggested follow-up commands (config location and endpoint). */
export function reRunFlags(ctx: CommandContext): string {
  const parts: string[] = [];
  if (ctx.globals.config !== '.') parts.push(`-c ${ctx.globals.config}`);
  if (ctx.globals.emulator) parts.push('--emulator');
  else if (ctx.globals.apiUrl) parts.push(`--api-url ${ctx.globals.apiUrl}`);
  return parts.length ? ` ${parts.join(' ')}` : '';
}
