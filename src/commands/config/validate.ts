/**
 * `loko config validate`: load the configuration offline (format and consistency only; metros,
 * plans, OS and capacity are checked by plan/apply preflight) and print every diagnostic.
 */
import { Command } from 'commander';
import { ExitCode } from '../../util/errors.js';
import type { RunAction } from '../shared/context.js';

/** Defines the command. */
export function configValidateCommand(runAction: RunAction): Command {
  return new Command('validate')
    .description('check the configuration offline and list every problem with file:line:col')
    .action(
      runAction(async (ctx) => {
        const { loadRaw, printDiagnostics } = await import('../shared/load-config.js');
        const { diagnosticJson } = await import('../shared/errors.js');
        const result = await loadRaw(ctx);
        const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
        const warnings = result.diagnostics.length - errors;
        const valid = errors === 0 && result.cluster !== undefined;

        if (ctx.host.format === 'json') {
          ctx.host.json({
            valid,
            files: result.files,
            errors,
            warnings,
            diagnostics: result.diagnostics.map(diagnosticJson),
            ...(result.cluster
              ? {
                  cluster: {
                    name: result.cluster.clusterName,
                    controllers: result.cluster.controllerCount,
                    workerPools: result.cluster.workerPools.map((p) => ({
                      name: p.name,
                      count: p.count,
                    })),
                  },
                }
              : {}),
          });
          return valid ? ExitCode.ok : ExitCode.error;
        }

        await printDiagnostics(ctx, result.diagnostics);
        if (errors > 0) {
          ctx.host.error(
            `the configuration has ${errors} error${errors === 1 ? '' : 's'}${warnings ? ` and ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`,
          );
          return ExitCode.error;
        }
        if (!result.cluster) {
          ctx.host.error(`no cluster block found in ${ctx.globals.config}`);
          return ExitCode.error;
        }
        const c = result.cluster;
        const workers = c.workerPools.reduce((s, p) => s + p.count, 0);
        ctx.host.out(
          `Configuration is valid (${result.files.length} file${result.files.length === 1 ? '' : 's'}): cluster "${c.clusterName}", ${c.controllerCount} controller${c.controllerCount === 1 ? '' : 's'}, ${workers} worker${workers === 1 ? '' : 's'} in ${c.workerPools.length} pool${c.workerPools.length === 1 ? '' : 's'}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}.`,
        );
        return ExitCode.ok;
      }),
    );
}
