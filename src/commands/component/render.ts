/**
 * `loko component render <name>`: the objects a component would apply, as multi-document YAML on
 * stdout, Secret values redacted unless `--show-secrets`. Works without a cluster (defaults and
 * placeholders); with a cluster configuration its facts (name, project, metro, CIDRs) are used.
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { CommandContext, RunAction } from '../shared/context.js';

/** Flags of `component render`. */
export interface RenderFlags {
  showSecrets?: boolean;
}

/** Defines the command. */
export function componentRenderCommand(runAction: RunAction): Command {
  return new Command('render')
    .description("print a component's objects as YAML on stdout (Secret values redacted)")
    .argument('<name>', 'component name (see `loko component list`)')
    .option('--show-secrets', 'print Secret values instead of <redacted>')
    .addHelpText(
      'after',
      '\nExamples:\n  loko component render metallb -c examples/quickstart\n  loko component render cloud-provider-equinix-metal --show-secrets > ccm.yaml',
    )
    .action((name: string, opts: RenderFlags, cmd: Command) =>
      runAction<RenderFlags>((ctx, o) => renderComponent(ctx, name, o))(opts, cmd),
    );
}

async function renderComponent(
  ctx: CommandContext,
  name: string,
  opts: RenderFlags,
): Promise<number> {
  const { requireComponent } = await import('../../components/registry.js');
  requireComponent(name); // an unknown name fails before any loading
  const { loadComponentConfig, componentContextFor, resolveMetalContext, clusterComponentNames } =
    await import('./session.js');
  const { resolveComponents } = await import('../../components/resolve.js');
  const { renderYaml } = await import('../../components/render-output.js');
  const config = await loadComponentConfig(ctx);
  const warnings: import('../../config/types.js').Diagnostic[] = [];
  const [c] = resolveComponents(config.result, {
    names: [name],
    includeBootstrap: false,
    warnings,
  });
  const { printDiagnostics } = await import('../shared/load-config.js');
  await printDiagnostics(ctx, warnings);
  const metal = await resolveMetalContext(ctx, config.cluster, 'render');
  const all = new Set([...(await clusterComponentNames(config)), name]);
  const cctx = await componentContextFor(ctx, config, [c!], all, metal);
  const objects = c!.def.render(c!.config, cctx);
  if (ctx.host.format === 'json') {
    const { redactSecrets } = await import('../../components/render-output.js');
    ctx.host.json({
      component: name,
      objects: opts.showSecrets ? objects : objects.map(redactSecrets),
    });
    return ExitCode.ok;
  }
  ctx.host.streams.stdout.write(renderYaml(objects, { showSecrets: opts.showSecrets ?? false }));
  if (!opts.showSecrets && objects.some((o) => o.kind === 'Secret' && o.apiVersion === 'v1'))
    ctx.host.info('Secret values are shown as <redacted>; pass --show-secrets to print them.');
  return ExitCode.ok;
}
