/**
 * The loader: finds the lokocfg files, parses and merges them, resolves variables, decodes the
 * `cluster` block and records components. All diagnostics are collected and returned together.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { variableReferences, type Block, type Body } from './ast.js';
import { decodeCluster } from './cluster.js';
import { checkLabels, decodeBody } from './decode.js';
import {
  DiagnosticSink,
  formatPosition,
  quoteList,
  sortDiagnostics,
  suggest,
} from './diagnostics.js';
import type { EvalContext } from './evaluate.js';
import { parseHcl } from './parse.js';
import { COMPONENT_SPEC, TOP_LEVEL_BLOCKS, TOP_LEVEL_UNSUPPORTED } from './spec.js';
import type { ClusterConfig, ConfiguredBlock, LoadOptions, LoadResult } from './types.js';
import { declareVariables, readVarFile, VariableResolver, type VarFile } from './variables.js';

/** File name of the optional variable file in the configuration directory. */
export const VARS_FILE = 'lokocfg.vars';

/**
 * Loads a configuration: `opts.path` is a directory (every `*.lokocfg` in it, sorted by name, not
 * recursive, merged) or a single file. With `opts.componentSpecs`, `component` bodies are decoded
 * with their component's spec (variables and functions work there as in the cluster block). Never throws for configuration mistakes: every problem is a
 * {@link Diagnostic} with file:line:col where one exists, and `cluster` is set only when there is no
 * error. Syntax errors stop the load after parsing (the tree is not trustworthy). `files` lists the
 * config files, then lokocfg.vars and --var-file files that were read.
 */
export async function loadConfig(opts: LoadOptions): Promise<LoadResult> {
  const env = opts.env ?? process.env;
  const sink = new DiagnosticSink();
  const result: LoadResult = {
    components: new Map(),
    diagnostics: [],
    sources: new Map(),
    files: [],
  };
  const finish = (cluster?: ClusterConfig): LoadResult => {
    result.diagnostics = sortDiagnostics(sink.items, result.files);
    if (cluster && sink.errorCount === 0) result.cluster = cluster;
    return result;
  };

  const found = await findFiles(opts.path, sink);
  if (!found) return finish();
  result.files.push(...found.files);

  const bodies: Body[] = [];
  let syntaxError = false;
  for (const file of found.files) {
    let src: string;
    try {
      src = await readFile(file, 'utf8');
    } catch (err) {
      sink.error(`Cannot read ${file}`, (err as Error).message, undefined);
      syntaxError = true;
      continue;
    }
    const parsed = await parseHcl(src, file);
    sink.items.push(...parsed.diagnostics);
    syntaxError ||= parsed.syntaxError;
    bodies.push(parsed.body);
  }
  if (syntaxError) return finish();

  const top = classifyTopLevel(bodies, sink);
  const decls = declareVariables(top.variable, sink, env);

  const varFiles: VarFile[] = [];
  const readVars = async (file: string, optional: boolean): Promise<void> => {
    const vf = await readVarFile(file, optional, sink, env);
    if (vf) {
      varFiles.push(vf);
      result.files.push(file);
    }
  };
  await readVars(path.join(found.dir, VARS_FILE), true);
  for (const f of opts.varFiles ?? []) await readVars(path.resolve(f), false);

  const resolver = new VariableResolver({ decls, cli: opts.vars ?? {}, env, files: varFiles });
  await resolver.prepare(sink);

  const ctx: EvalContext = {
    sink,
    functions: true,
    env,
    lookupVar: (name, range) => resolver.lookup(name, range, sink),
    variableNames: [...decls.keys()],
  };

  for (const block of top.component) {
    if (!checkLabels(block, COMPONENT_SPEC, sink)) continue;
    const label = block.labels[0]!;
    const prev = result.components.get(label.value);
    if (prev) {
      sink.error(
        `Duplicate component "${label.value}"`,
        `component "${label.value}" is already configured at ${formatPosition(prev.range)}; configure it once.`,
        label.range,
      );
      continue;
    }
    const entry: ConfiguredBlock = { range: block.range, headerRange: block.headerRange };
    result.components.set(label.value, entry);
    result.sources.set(`component.${label.value}`, block.headerRange);
    if (!opts.componentSpecs) continue;
    const spec = opts.componentSpecs.get(label.value);
    if (!spec) {
      const names = [...opts.componentSpecs.keys()];
      const near = suggest(label.value, names);
      sink.error(
        `Unknown component "${label.value}"`,
        `${near ? `Did you mean "${near}"? ` : ''}Valid components: ${names.join(', ')} (\`loko component list\` describes them).`,
        label.range,
      );
      continue;
    }
    const errorsBefore = sink.errorCount;
    const where = `component "${label.value}"`;
    const body = decodeBody(block.body, spec, where, block.headerRange, ctx, { nested: true });
    for (const [name, a] of body.attrs) {
      if (a.attr) result.sources.set(`component.${label.value}.${name}`, a.attr.expr.range);
    }
    if (sink.errorCount === errorsBefore) entry.body = body;
  }

  let cluster: ClusterConfig | undefined;
  if (top.cluster.length > 0) cluster = decodeCluster(top.cluster, ctx, result.sources);

  if (found.siblings && found.siblings.length > 0) noteSiblings(sink, found.siblings, opts.path);

  const referenced = new Set<string>();
  for (const b of [...top.cluster, ...top.component]) variableReferences(b.body, referenced);
  resolver.warnUnused(referenced, sink);
  return finish(cluster);
}

async function findFiles(
  given: string,
  sink: DiagnosticSink,
): Promise<{ dir: string; files: string[]; siblings?: string[] } | undefined> {
  const target = path.resolve(given);
  let info;
  try {
    info = await stat(target);
  } catch {
    sink.error(
      `Configuration path ${given} does not exist`,
      'Pass a directory of *.lokocfg files, or one file, with --config.',
      undefined,
    );
    return undefined;
  }
  if (!info.isDirectory()) {
    const base = path.basename(target);
    if (base === VARS_FILE) {
      sink.error(
        `${given} is the variables file, not a configuration file`,
        `${VARS_FILE} holds variable values and is read from the configuration directory. Point --config at the directory: -c ${path.dirname(given) || '.'}`,
        undefined,
      );
      return undefined;
    }
    if (!base.endsWith('.lokocfg')) {
      sink.error(
        `Configuration file ${given} does not end in .lokocfg`,
        'loko reads configuration from *.lokocfg files. Rename the file, or pass the directory that holds the *.lokocfg files with --config.',
        undefined,
      );
      return undefined;
    }
    const siblings = (await readdir(path.dirname(target)).catch(() => [] as string[]))
      .filter((n) => n.endsWith('.lokocfg') && n !== base)
      .sort();
    return { dir: path.dirname(target), files: [target], siblings };
  }
  const names = (await readdir(target)).filter((n) => n.endsWith('.lokocfg')).sort();
  const files: string[] = [];
  for (const n of names) {
    const full = path.join(target, n);
    // Broken symlinks (editor lock files) and directories named *.lokocfg are not config files.
    const s = await stat(full).catch(() => undefined);
    if (s?.isFile()) files.push(full);
  }
  if (files.length === 0) {
    sink.error(
      `No *.lokocfg files in ${given}`,
      `loko reads every *.lokocfg file in the configuration directory (${target}). Create one, e.g. cluster.lokocfg, or pass a different --config.`,
      undefined,
    );
    return undefined;
  }
  return { dir: target, files };
}

interface TopLevel {
  cluster: Block[];
  variable: Block[];
  component: Block[];
}

/** Sorts the merged top-level blocks by type and reports everything else found there. */
function classifyTopLevel(bodies: Body[], sink: DiagnosticSink): TopLevel {
  const out: TopLevel = { cluster: [], variable: [], component: [] };
  const names = TOP_LEVEL_BLOCKS.map((b) => b.type);
  for (const body of bodies) {
    for (const a of body.attributes) {
      sink.error(
        `Unexpected attribute "${a.name}" at the top level`,
        `Attributes belong inside a block: ${quoteList(names)}. Variable values go in ${VARS_FILE} or a --var-file.`,
        a.nameRange,
      );
    }
    for (const b of body.blocks) {
      if (b.type === 'cluster' || b.type === 'variable' || b.type === 'component') {
        out[b.type].push(b);
      } else if (Object.hasOwn(TOP_LEVEL_UNSUPPORTED, b.type)) {
        sink.error(
          `"${b.type}" blocks are not supported by loko`,
          TOP_LEVEL_UNSUPPORTED[b.type],
          b.typeRange,
        );
      } else {
        const near = suggest(b.type, names);
        sink.error(
          `Unsupported block type "${b.type}"`,
          `${near ? `Did you mean "${near}"? ` : ''}Valid top-level blocks: ${names.join(', ')}.`,
          b.typeRange,
        );
      }
    }
  }
  return out;
}

/**
 * With --config naming one file, its sibling *.lokocfg files are not loaded; when a variable then
 * has no value (typically declared or defaulted in a sibling), the diagnostics say so.
 */
function noteSiblings(sink: DiagnosticSink, siblings: string[], given: string): void {
  const dir = path.dirname(given) || '.';
  const shown =
    siblings.length > 3 ? `${siblings.slice(0, 3).join(', ')}, ...` : siblings.join(', ');
  const note = `Note: --config names one file, so the other .lokocfg files next to it (${shown}) were not loaded; -c ${dir} loads them all.`;
  for (const d of sink.items) {
    if (
      d.severity === 'error' &&
      (d.summary.startsWith('No value for variable') || / is not declared$/.test(d.summary))
    ) {
      d.detail = d.detail ? `${d.detail}\n${note}` : note;
    }
  }
}
