/**
 * `loko component list`: every component loko knows, in registry order, with its namespace,
 * whether `cluster apply` always installs it (bootstrap) and whether the configuration has a
 * block for it.
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { RunAction } from '../shared/context.js';

/** Defines the command. */
export function componentListCommand(runAction: RunAction): Command {
  return new Command('list')
    .description('list the components loko can install, and which ones are configured')
    .action(
      runAction(async (ctx) => {
        const { loadComponentConfig } = await import('./session.js');
        const { COMPONENTS } = await import('../../components/registry.js');
        const config = await loadComponentConfig(ctx);
        const rows = COMPONENTS.map((c) => ({
          name: c.name,
          namespace: c.namespace,
          bootstrap: c.bootstrap,
          configured: config.result.components.has(c.name),
          dependsOn: [...c.dependsOn],
          description: c.description,
        }));
        if (ctx.host.format === 'json') {
          ctx.host.json({ components: rows });
          return ExitCode.ok;
        }
        const c = ctx.host.colorOut;
        const table = rows.map((r) => [
          r.name,
          r.namespace,
          r.bootstrap ? 'yes' : 'no',
          r.configured ? 'yes' : 'no',
          r.description,
        ]);
        const header = ['NAME', 'NAMESPACE', 'BOOTSTRAP', 'CONFIGURED', 'DESCRIPTION'];
        const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
        const fmt = (r: string[]): string =>
          r
            .map((v, i) => v.padEnd(widths[i]!))
            .join('  ')
            .trimEnd();
        ctx.host.out(c.bold(fmt(header)));
        for (const r of table) ctx.host.out(fmt(r));
        ctx.host.out('');
        ctx.host.out(
          'Bootstrap components are installed by every `loko cluster apply`; a component "<name>" { ... } block tunes them.',
        );
        return ExitCode.ok;
      }),
    );
}
