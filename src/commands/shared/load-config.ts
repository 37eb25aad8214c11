/**
 * Loading the configuration for a command: `-c`, `--var`, `--var-file`, `LOKO_VAR_*`; warnings
 * are printed, errors become a {@link ConfigError} carrying every diagnostic.
 */
import path from 'node:path';
import type { ClusterConfig, LoadResult } from '../../config/types.js';
import { LokoError } from '../../util/errors.js';
import type { CommandContext } from './context.js';
import { ConfigError } from './errors.js';

/** Parses repeated `--var name=value` flags. Throws a LokoError naming the bad flag. */
export function parseVars(values: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    const name = eq > 0 ? v.slice(0, eq).trim() : '';
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
      throw new LokoError(`--var "${v}": expected name=value`, {
        hint: 'For example: --var cluster_name=demo',
      });
    }
    vars[name] = v.slice(eq + 1);
  }
  return vars;
}

/**
 * Checks the paths given with `-c` and `--var-file` before loading, so a wrong flag is reported as
 * a flag problem (naming the flag) rather than as a configuration error or a raw EISDIR.
 */
export async function checkPathFlags(ctx: CommandContext): Promise<void> {
  const { stat } = await import('node:fs/promises');
  const kind = async (p: string): Promise<'file' | 'dir' | 'missing' | NodeJS.ErrnoException> => {
    try {
      return (await stat(path.resolve(ctx.cwd, p))).isDirectory() ? 'dir' : 'file';
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return e.code === 'ENOENT' || e.code === 'ENOTDIR' ? 'missing' : e;
    }
  };
  const config = await kind(ctx.globals.config);
  if (config === 'missing') {
    throw new LokoError(`-c/--config ${ctx.globals.config}: no such file or directory`, {
      hint: 'Pass a directory of *.lokocfg files, or one .lokocfg file, for example -c examples/quickstart.',
    });
  }
  for (const f of ctx.globals.varFile) {
    const k = await kind(f);
    if (k === 'missing') {
      throw new LokoError(`--var-file ${f}: no such file`, {
        hint: 'Check the path; a variable file holds name = value lines, like lokocfg.vars.',
      });
    }
    if (k === 'dir') {
      throw new LokoError(`--var-file ${f} is a directory, not a file`, {
        hint: 'Pass a file of name = value lines, like lokocfg.vars (use -c for the configuration directory).',
      });
    }
    if (k !== 'file') {
      throw new LokoError(`--var-file ${f}: cannot read it (${k.code ?? k.message})`, {
        hint: 'Check that the file exists and that you may read it.',
      });
    }
  }
}

/** Loads the configuration without failing on errors (for `config validate`). */
export async function loadRaw(ctx: CommandContext): Promise<LoadResult> {
  await checkPathFlags(ctx);
  const [{ loadConfig }, { componentSpecs }] = await Promise.all([
    import('../../config/index.js'),
    // Component blocks are checked like the cluster block (file:line, did-you-mean).
    import('../../components/registry.js'),
  ]);
  const result = await loadConfig({
    path: path.resolve(ctx.cwd, ctx.globals.config),
    vars: parseVars(ctx.globals.var),
    varFiles: ctx.globals.varFile.map((f) => path.resolve(ctx.cwd, f)),
    env: ctx.env,
    componentSpecs: componentSpecs(),
  });
  if (!result.diagnostics.some((d) => d.severity === 'error')) {
    result.diagnostics.push(...(await componentDiagnostics(result)));
  }
  return result;
}

/**
 * What the components' own checks say about their blocks (CIDRs, overlaps, ports, ...: the part
 * the block specs cannot express), so `config validate`, `plan` and `apply` report them with the
 * rest before anything runs.
 */
async function componentDiagnostics(result: LoadResult): Promise<LoadResult['diagnostics']> {
  const { resolveComponents, ComponentConfigError } = await import('../../components/resolve.js');
  const warnings: LoadResult['diagnostics'] = [];
  try {
    resolveComponents(result, { includeBootstrap: true, warnings });
    return warnings;
  } catch (err) {
    if (err instanceof ComponentConfigError) return [...err.diagnostics, ...warnings];
    throw err;
  }
}

/**
 * Loads the configuration and requires a valid `cluster` block. Prints warnings to stderr.
 * Throws ConfigError when there are errors.
 */
export async function loadClusterConfig(
  ctx: CommandContext,
): Promise<{ cluster: ClusterConfig; result: LoadResult }> {
  const result = await loadRaw(ctx);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !result.cluster) {
    if (errors.length === 0) {
      throw new LokoError(`no cluster block found in ${ctx.globals.config}`, {
        hint: 'Add a `cluster "equinixmetal" { ... }` block (see examples/quickstart/cluster.lokocfg).',
      });
    }
    throw new ConfigError(result.diagnostics);
  }
  await printDiagnostics(ctx, result.diagnostics);
  return { cluster: result.cluster, result };
}

/** Prints diagnostics to stderr with file:line:col, relative to the working directory. */
export async function printDiagnostics(
  ctx: CommandContext,
  diagnostics: LoadResult['diagnostics'],
): Promise<void> {
  if (diagnostics.length === 0) return;
  const { formatDiagnostic } = await import('../../config/index.js');
  const color = ctx.host.color.level > 0;
  for (const d of diagnostics) ctx.host.info(formatDiagnostic(d, { cwd: ctx.cwd, color }));
}
