/**
 * Input variables: `variable` blocks, variable files (`lokocfg.vars`, `--var-file`), `LOKO_VAR_<name>`
 * and `--var`. Precedence, highest first: --var > LOKO_VAR_<name> > --var-file (later files win) >
 * lokocfg.vars > the block's `default`.
 */
import { readFile } from 'node:fs/promises';
import type { Block, Expr } from './ast.js';
import { checkLabels, decodeBody } from './decode.js';
import { DiagnosticSink, formatPosition, suggest } from './diagnostics.js';
import { evaluate, type EvalContext } from './evaluate.js';
import { parseHcl } from './parse.js';
import { VARIABLE_SPEC } from './spec.js';
import type { SourceRange } from './types.js';
import { UNKNOWN, type Value } from './values.js';

/** A `variable "<name>"` block. */
export interface VariableDecl {
  name: string;
  /** The name label. */
  range: SourceRange;
  /** Evaluated `default`; absent when there is none (or it failed to evaluate). */
  default?: Value;
  /** The default failed to evaluate (already reported): references stay quiet. */
  defaultFailed?: boolean;
  /** Declared with a collection `type`, so string values from --var / env are parsed as HCL. */
  collection: boolean;
  /** The kind the declared `type` constrains values to; absent when there is none (or `any`). */
  kind?: TypeKind;
}

/** The outer kind of a variable `type`: element types are not checked. */
export type TypeKind = 'string' | 'number' | 'bool' | 'list' | 'map';

const PRIMITIVE_TYPES = ['string', 'number', 'bool', 'any'];
const COLLECTION_TYPES = ['list', 'set', 'tuple', 'map', 'object'];

/** One `name = value` of a variable file. */
export interface VarFileEntry {
  value: Value;
  /** The value expression, for type errors. */
  valueRange: SourceRange;
  /** The attribute name, for "unused value" warnings. */
  range: SourceRange;
}

/** A variable file's values in source order. */
export type VarFile = Map<string, VarFileEntry>;

const LITERALS_ONLY =
  'variable files hold literal values only (strings, numbers, bools, lists, maps)';

/**
 * Reads a variable file: plain `name = literal` attributes. A missing file is fine when `optional`
 * (lokocfg.vars) and an error otherwise (--var-file). Returns undefined when it was not read.
 */
export async function readVarFile(
  file: string,
  optional: boolean,
  sink: DiagnosticSink,
  env: Record<string, string | undefined>,
): Promise<VarFile | undefined> {
  let src: string;
  try {
    src = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (optional && code === 'ENOENT') return undefined;
    sink.error(
      `Cannot read variable file ${file}`,
      code === 'ENOENT'
        ? 'The file does not exist; check the --var-file path.'
        : (err as Error).message,
      undefined,
    );
    return undefined;
  }
  const parsed = await parseHcl(src, file);
  sink.items.push(...parsed.diagnostics);
  const out: VarFile = new Map();
  if (parsed.syntaxError) return out;
  for (const b of parsed.body.blocks) {
    sink.error(
      `Unexpected "${b.type}" block in a variable file`,
      'Variable files contain only name = value lines; declare variables in a .lokocfg file.',
      b.typeRange,
    );
  }
  const ctx: EvalContext = { sink, functions: false, env, restriction: LITERALS_ONLY };
  for (const a of parsed.body.attributes) {
    const prev = out.get(a.name);
    if (prev) {
      sink.error(
        `Duplicate variable "${a.name}"`,
        `"${a.name}" is already set at ${formatPosition(prev.range)}; set it once per file.`,
        a.nameRange,
      );
      continue;
    }
    out.set(a.name, { value: evaluate(a.expr, ctx), range: a.nameRange, valueRange: a.expr.range });
  }
  return out;
}

/**
 * Decodes `variable` blocks. `default` may use functions but no variables; `type` is accepted and
 * only used to parse collection values given on the command line or in the environment.
 */
export function declareVariables(
  blocks: Block[],
  sink: DiagnosticSink,
  env: Record<string, string | undefined>,
): Map<string, VariableDecl> {
  const decls = new Map<string, VariableDecl>();
  const ctx: EvalContext = {
    sink,
    functions: true,
    env,
    restriction: 'a variable default cannot refer to other variables',
  };
  for (const block of blocks) {
    if (!checkLabels(block, VARIABLE_SPEC, sink)) continue;
    const label = block.labels[0]!;
    const d = decodeBody(
      block.body,
      VARIABLE_SPEC,
      `variable "${label.value}"`,
      block.headerRange,
      ctx,
    );
    const prev = decls.get(label.value);
    if (prev) {
      sink.error(
        `Duplicate variable "${label.value}"`,
        `variable "${label.value}" is already declared at ${formatPosition(prev.range)}.`,
        label.range,
      );
      continue;
    }
    const typeExpr = d.attrs.get('type')!.attr?.expr;
    const decl: VariableDecl = {
      name: label.value,
      range: label.range,
      collection: isCollectionType(typeExpr),
    };
    const kind = typeExpr ? typeKind(typeExpr, label.value, sink) : undefined;
    if (kind) decl.kind = kind;
    const dflt = d.attrs.get('default')!;
    if (dflt.attr && dflt.valid) {
      const v = (dflt.value ?? null) as Value;
      const conv: { value: Value } | { problem: string } = kind ? convertTo(v, kind) : { value: v };
      if ('problem' in conv) {
        sink.error(
          `Invalid default for variable "${label.value}"`,
          `The variable's type is ${kind}: ${conv.problem}.`,
          dflt.attr.expr.range,
        );
        decl.defaultFailed = true;
      } else decl.default = conv.value as Value;
    } else if (dflt.attr) decl.defaultFailed = true;
    decls.set(label.value, decl);
  }
  return decls;
}

/**
 * The kind of a `type` expression: string, number, bool, any, or list/set/tuple/map/object with
 * or without element types. Anything else is reported (with a did-you-mean) and gives undefined.
 */
function typeKind(e: Expr, variable: string, sink: DiagnosticSink): TypeKind | undefined {
  const name = e.kind === 'variable' || e.kind === 'call' ? e.name : undefined;
  const known = [...PRIMITIVE_TYPES, ...COLLECTION_TYPES];
  if (name === undefined || !known.includes(name)) {
    const near = name === undefined ? undefined : suggest(name, known);
    sink.error(
      name === undefined
        ? `Invalid type for variable "${variable}"`
        : `Unknown type "${name}" for variable "${variable}"`,
      `${near ? `Did you mean "${near}"? ` : ''}A type is string, number, bool, any, list(<type>), set(<type>), map(<type>), tuple([...]) or object({...}), written without quotes.`,
      e.range,
    );
    return undefined;
  }
  if (name === 'any') return undefined;
  if (name === 'list' || name === 'set' || name === 'tuple') return 'list';
  if (name === 'map' || name === 'object') return 'map';
  return name as TypeKind;
}

/** `value` converted to `kind` as HCL converts (numbers and bools to and from strings), or why not. */
export function convertTo(value: Value, kind: TypeKind): { value: Value } | { problem: string } {
  if (value === null || value === UNKNOWN) return { value };
  const got = Array.isArray(value)
    ? 'a list'
    : value instanceof Map
      ? 'a map'
      : typeof value === 'string'
        ? `the string ${JSON.stringify(value)}`
        : `${typeof value === 'number' ? 'the number' : 'the bool'} ${String(value)}`;
  switch (kind) {
    case 'string':
      if (typeof value === 'string') return { value };
      if (typeof value === 'number' || typeof value === 'boolean') return { value: String(value) };
      return { problem: `expected a string, got ${got}` };
    case 'number':
      if (typeof value === 'number') return { value };
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
        return { value: Number(value) };
      return { problem: `expected a number, got ${got}` };
    case 'bool':
      if (typeof value === 'boolean') return { value };
      if (value === 'true' || value === 'false') return { value: value === 'true' };
      return { problem: `expected a bool (true or false), got ${got}` };
    case 'list':
      return Array.isArray(value) ? { value } : { problem: `expected a list, got ${got}` };
    case 'map':
      return value instanceof Map ? { value } : { problem: `expected a map, got ${got}` };
  }
}

function isCollectionType(e: Expr | undefined): boolean {
  const collections = ['list', 'map', 'set', 'object', 'tuple'];
  if (!e) return false;
  if (e.kind === 'variable') return collections.includes(e.name);
  if (e.kind === 'call') return collections.includes(e.name);
  return false;
}

/** Inputs of {@link VariableResolver}. */
export interface VariableSources {
  decls: Map<string, VariableDecl>;
  /** `--var name=value`. */
  cli: Record<string, string>;
  env: Record<string, string | undefined>;
  /** Variable files from lowest to highest precedence: lokocfg.vars, then --var-file in order. */
  files: VarFile[];
}

/** Resolves `var.<name>` by precedence and reports variables without a value. */
export class VariableResolver {
  /** Collection values from --var / env, parsed ahead of evaluation (parsing is async). */
  private readonly parsed = new Map<string, Value>();

  constructor(private readonly src: VariableSources) {}

  /**
   * Parses --var / LOKO_VAR_ values of collection-typed variables as HCL literals, and checks every
   * value given for a typed variable against its type where it is given (the flag, the variable,
   * the var-file's value), so a wrong type is not reported where the variable is used.
   */
  async prepare(sink: DiagnosticSink): Promise<void> {
    for (const decl of this.src.decls.values()) {
      const raw = this.rawString(decl.name);
      if (decl.collection && raw) {
        this.parsed.set(
          decl.name,
          await parseLiteral(raw.text, `${raw.from} (variable "${decl.name}")`, sink, this.src.env),
        );
      }
      const kind = decl.kind;
      if (!kind) continue;
      if (raw) {
        const given = this.parsed.get(decl.name) ?? raw.text;
        const conv = convertTo(given, kind);
        if ('problem' in conv) {
          const flag = raw.from.startsWith('--var')
            ? `--var ${decl.name}=${raw.text}`
            : `${raw.from}=${raw.text}`;
          sink.error(
            `${flag}: ${conv.problem.replace(/, got .*$/, '')}`,
            `variable "${decl.name}" (declared at ${formatPosition(decl.range)}) has type ${kind}; ${conv.problem}.`,
            undefined,
          );
          this.parsed.set(decl.name, UNKNOWN);
        } else this.parsed.set(decl.name, conv.value);
      }
      for (const file of this.src.files) {
        const entry = file.get(decl.name);
        if (!entry) continue;
        const conv = convertTo(entry.value, kind);
        if ('problem' in conv) {
          sink.error(
            `Invalid value for variable "${decl.name}"`,
            `variable "${decl.name}" (declared at ${formatPosition(decl.range)}) has type ${kind}; ${conv.problem}.`,
            entry.valueRange,
          );
          entry.value = UNKNOWN;
        } else entry.value = conv.value;
      }
    }
  }

  private rawString(name: string): { text: string; from: string } | undefined {
    if (Object.hasOwn(this.src.cli, name))
      return { text: this.src.cli[name]!, from: `--var ${name}=...` };
    const e = this.src.env[`LOKO_VAR_${name}`];
    if (e !== undefined) return { text: e, from: `LOKO_VAR_${name}` };
    return undefined;
  }

  /** The value of `var.<name>`; reports at `range` and returns UNKNOWN when nothing sets it. */
  lookup(name: string, range: SourceRange, sink: DiagnosticSink): Value {
    const raw = this.rawString(name);
    if (raw) return this.parsed.get(name) ?? raw.text;
    for (let i = this.src.files.length - 1; i >= 0; i--) {
      const entry = this.src.files[i]!.get(name);
      if (entry) return entry.value;
    }
    const decl = this.src.decls.get(name);
    if (decl?.default !== undefined) return decl.default;
    if (decl?.defaultFailed) return UNKNOWN;
    const known = [...this.src.decls.keys()];
    const near = decl ? undefined : suggest(name, known);
    sink.error(
      decl ? `No value for variable "${name}"` : `variable "${name}" is not declared`,
      [
        near ? `Did you mean var.${near}? ` : '',
        decl ? '' : `Nothing declares or sets "${name}". `,
        `Set it in one of these ways (highest precedence first):\n`,
        `  --var ${name}=<value>\n`,
        `  LOKO_VAR_${name}=<value> in the environment\n`,
        `  ${name} = <value> in a file passed with --var-file\n`,
        `  ${name} = <value> in lokocfg.vars next to the configuration\n`,
        decl
          ? `or give variable "${name}" a default.`
          : `or declare variable "${name}" { default = <value> }.`,
      ].join(''),
      range,
    );
    return UNKNOWN;
  }

  /** Warns about --var and variable-file values that nothing declares or references (likely typos). */
  warnUnused(referenced: Set<string>, sink: DiagnosticSink): void {
    const known = [...new Set([...this.src.decls.keys(), ...referenced])];
    const used = (n: string): boolean => this.src.decls.has(n) || referenced.has(n);
    const hint = (n: string): string => {
      const near = suggest(n, known);
      return near ? ` Did you mean "${near}"?` : '';
    };
    for (const name of Object.keys(this.src.cli)) {
      if (!used(name)) {
        sink.warning(
          `Value for undeclared variable "${name}"`,
          `--var ${name}=... sets a variable that no variable block declares and no var.${name} uses.${hint(name)}`,
          undefined,
        );
      }
    }
    for (const file of this.src.files) {
      for (const [name, entry] of file) {
        if (!used(name)) {
          sink.warning(
            `Value for undeclared variable "${name}"`,
            `No variable block declares "${name}" and no var.${name} uses it.${hint(name)}`,
            entry.range,
          );
        }
      }
    }
  }
}

async function parseLiteral(
  text: string,
  from: string,
  sink: DiagnosticSink,
  env: Record<string, string | undefined>,
): Promise<Value> {
  const parsed = await parseHcl(`value = ${text}\n`, from);
  const attr = parsed.body.attributes[0];
  const local = new DiagnosticSink();
  const value =
    parsed.syntaxError || !attr || parsed.body.attributes.length !== 1
      ? UNKNOWN
      : evaluate(attr.expr, { sink: local, functions: false, env, restriction: LITERALS_ONLY });
  if (value === UNKNOWN || local.errorCount > 0) {
    const why = [...parsed.diagnostics, ...local.items].find((d) => d.severity === 'error');
    sink.error(
      `Invalid value from ${from}`,
      `The variable is declared with a collection type, so its value must be an HCL literal such as ["a", "b"] or { k = "v" }${why ? ` (${why.summary})` : ''}.`,
      undefined,
    );
    return UNKNOWN;
  }
  return value;
}
