/**
 * Spec-driven decoding of a block body: evaluates each known attribute, converts it to the spec's
 * type, checks enum/pattern/length/range, and reports unknown, unsupported, duplicate and missing
 * attributes and blocks. Cross-attribute rules are not here (see cluster.ts).
 */
import {
  elementExpr,
  elementKeyExpr,
  type Attribute,
  type Block,
  type Body,
  type Expr,
} from './ast.js';
import { asBool, asNumber, asString } from './convert.js';
import { DiagnosticSink, formatPosition, quoteList, suggest } from './diagnostics.js';
import { evaluate, type EvalContext } from './evaluate.js';
import type { AttrSpec, BlockSpec, LabelSpec, ValueSpec } from './spec.js';
import type { SourceRange } from './types.js';
import { UNKNOWN, show, typeName, type Value } from './values.js';

/** A decoded value: strings, numbers, bools, lists and string-keyed records of those. */
export type Decoded = string | number | boolean | Decoded[] | { [key: string]: Decoded } | Value;

/** One attribute of the spec after decoding. */
export interface DecodedAttr {
  spec: AttrSpec;
  /** The attribute as written; undefined when unset. */
  attr?: Attribute;
  /**
   * The converted value; undefined when unset, null, or invalid (then a diagnostic exists).
   * Maps decode to null-prototype records.
   */
  value?: Decoded;
  /** False when the attribute is set but invalid. */
  valid: boolean;
}

/** A decoded body: every spec attribute (set or not), and the nested blocks by type. */
export interface DecodedBody {
  attrs: Map<string, DecodedAttr>;
  /** Nested blocks with well-formed labels, by type (every spec block type has an entry). */
  blocks: Map<string, Block[]>;
  /**
   * The nested blocks of `blocks`, each decoded with its own spec, when decoded with
   * `{ nested: true }` (component bodies: a component's decode has no evaluation context).
   */
  nested?: Map<string, DecodedBlock[]>;
}

/** A nested block decoded with its spec. */
export interface DecodedBlock {
  block: Block;
  /** Label values, e.g. `["default"]` for `address_pool "default" { ... }`. */
  labels: string[];
  body: DecodedBody;
}

/**
 * The body of a block that is not written: every attribute unset (defaults apply in the
 * consumer), no nested blocks. What a component's decode gets when the component has no block.
 */
export function emptyDecodedBody(spec: BlockSpec): DecodedBody {
  const out: DecodedBody = { attrs: new Map(), blocks: new Map(), nested: new Map() };
  for (const a of spec.attributes) out.attrs.set(a.name, { spec: a, valid: true });
  for (const b of spec.blocks) {
    out.blocks.set(b.type, []);
    out.nested!.set(b.type, []);
  }
  return out;
}

/**
 * Decodes `body` against `spec`. `where` names the block in messages (e.g. `cluster "equinixmetal"`),
 * `header` is where "missing attribute" diagnostics point. With `opts.nested`, nested blocks are
 * decoded too (recursively) into {@link DecodedBody.nested}; a repeated non-repeatable nested block
 * is then an error.
 */
export function decodeBody(
  body: Body,
  spec: BlockSpec,
  where: string,
  header: SourceRange,
  ctx: EvalContext,
  opts: { nested?: boolean } = {},
): DecodedBody {
  const sink = ctx.sink;
  const attrSpecs = new Map(spec.attributes.map((a) => [a.name, a]));
  const blockSpecs = new Map(spec.blocks.map((b) => [b.type, b]));
  const out: DecodedBody = { attrs: new Map(), blocks: new Map() };
  for (const a of spec.attributes) out.attrs.set(a.name, { spec: a, valid: true });
  for (const b of spec.blocks) out.blocks.set(b.type, []);

  for (const attr of body.attributes) {
    const aspec = attrSpecs.get(attr.name);
    if (aspec) {
      const slot = out.attrs.get(attr.name)!;
      if (slot.attr) {
        sink.error(
          `Duplicate attribute "${attr.name}"`,
          `"${attr.name}" is already set at ${formatPosition(slot.attr.nameRange)}; set it once.`,
          attr.nameRange,
        );
        continue;
      }
      slot.attr = attr;
      if (aspec.deprecated) {
        sink.warning(`"${attr.name}" is deprecated`, aspec.deprecated, attr.nameRange);
      }
      if (aspec.value.type === 'type-expression') continue;
      const errorsBefore = sink.errorCount;
      const value = evaluate(attr.expr, ctx);
      const converted = convert(value, aspec.value, attr.expr, attr.name, sink);
      if (converted === null && (aspec.required || spec.requireOneOf?.includes(aspec.name))) {
        sink.error(
          `Invalid value for "${attr.name}"`,
          `${attr.name} cannot be null: ${aspec.description}`,
          attr.expr.range,
        );
      }
      slot.valid = sink.errorCount === errorsBefore;
      if (slot.valid && converted !== undefined && converted !== null) slot.value = converted;
      continue;
    }
    if (blockSpecs.has(attr.name)) {
      sink.error(
        `"${attr.name}" is a block, not an attribute`,
        `Write ${attr.name} ${blockSpecs
          .get(attr.name)!
          .labels.map((l) => `"<${l.name}>" `)
          .join('')}{ ... } without "=".`,
        attr.nameRange,
      );
      continue;
    }
    unknownName('attribute', attr.name, attr.nameRange, spec, where, sink);
  }

  for (const block of body.blocks) {
    const bspec = blockSpecs.get(block.type);
    if (bspec) {
      if (checkLabels(block, bspec, sink)) out.blocks.get(block.type)!.push(block);
      continue;
    }
    if (attrSpecs.has(block.type)) {
      sink.error(
        `"${block.type}" is an attribute, not a block`,
        `Write ${block.type} = ... (for a map: ${block.type} = { key = "value" }).`,
        block.typeRange,
      );
      continue;
    }
    unknownName('block', block.type, block.typeRange, spec, where, sink);
  }
  if (opts.nested) out.nested = decodeNested(out.blocks, spec, ctx);

  for (const a of spec.attributes) {
    if (a.required && out.attrs.get(a.name)!.attr === undefined) {
      sink.error(
        `Missing required attribute "${a.name}"`,
        `${where} needs ${a.name}: ${a.description}`,
        header,
      );
    }
  }
  if (spec.requireOneOf && spec.requireOneOf.every((n) => out.attrs.get(n)!.attr === undefined)) {
    const [first, ...others] = spec.requireOneOf;
    sink.error(
      `Missing required attribute "${first}"`,
      `${where} needs ${first}${others.length ? ` (or the deprecated ${others.join(', ')})` : ''}: ${attrSpecs.get(first!)!.description}`,
      header,
    );
  }
  return out;
}

function decodeNested(
  blocks: Map<string, Block[]>,
  spec: BlockSpec,
  ctx: EvalContext,
): Map<string, DecodedBlock[]> {
  const nested = new Map<string, DecodedBlock[]>();
  for (const bspec of spec.blocks) {
    const list: DecodedBlock[] = [];
    const seen = new Map<string, SourceRange>();
    for (const block of blocks.get(bspec.type) ?? []) {
      const labels = block.labels.map((l) => l.value);
      const key = labels.join('\u0000');
      // Unlabelled repeatable blocks (a list of `rule { }`) may repeat freely.
      const prev = bspec.repeatable && labels.length === 0 ? undefined : seen.get(key);
      if (prev) {
        const what = `${bspec.type}${labels.map((l) => ` "${l}"`).join('')}`;
        ctx.sink.error(
          `Duplicate ${what}`,
          bspec.repeatable
            ? `${what} is already defined at ${formatPosition(prev)}; each needs a unique label.`
            : `${bspec.type} is already set at ${formatPosition(prev)}; it may appear once.`,
          block.headerRange,
        );
        continue;
      }
      seen.set(key, block.headerRange);
      const where = `${bspec.type}${labels.map((l) => ` "${l}"`).join('')}`;
      const body = decodeBody(block.body, bspec, where, block.headerRange, ctx, { nested: true });
      list.push({ block, labels, body });
    }
    nested.set(bspec.type, list);
  }
  return nested;
}

function unknownName(
  kind: 'attribute' | 'block',
  name: string,
  range: SourceRange,
  spec: BlockSpec,
  where: string,
  sink: DiagnosticSink,
): void {
  if (spec.unsupported && Object.hasOwn(spec.unsupported, name)) {
    sink.error(`"${name}" is not supported by loko`, spec.unsupported[name], range);
    return;
  }
  const names = [...spec.attributes.map((a) => a.name), ...spec.blocks.map((b) => b.type)];
  const near = suggest(name, names);
  const summary =
    kind === 'attribute' ? `Unsupported attribute "${name}"` : `Unsupported block type "${name}"`;
  const valid = names.length
    ? `Valid names in ${where}: ${names.join(', ')}.`
    : `${where} takes no ${kind}s.`;
  sink.error(summary, `${near ? `Did you mean "${near}"? ` : ''}${valid}`, range);
}

/** Checks the number and format of a block's labels; false when the block must be skipped. */
export function checkLabels(block: Block, spec: BlockSpec, sink: DiagnosticSink): boolean {
  const want = spec.labels.length;
  if (block.labels.length !== want) {
    const shape = `${spec.type} ${spec.labels.map((l) => `"<${l.name}>" `).join('')}{ ... }`;
    sink.error(
      `Wrong number of labels on "${spec.type}" block`,
      `Expected ${want} label(s), got ${block.labels.length}: write ${shape}.`,
      block.headerRange,
    );
    return false;
  }
  let ok = true;
  spec.labels.forEach((l, i) => {
    const label = block.labels[i]!;
    const problem = checkString(label.value, l);
    if (problem) {
      sink.error(`Invalid ${spec.type} ${l.name} "${label.value}"`, problem, label.range);
      ok = false;
    }
  });
  return ok;
}

/** Why `s` breaks the string constraints, or undefined. */
function checkString(
  s: string,
  c: Pick<LabelSpec, 'enum' | 'pattern' | 'format' | 'maxLength'>,
): string | undefined {
  if (c.enum && !c.enum.includes(s)) {
    const near = suggest(s, c.enum);
    return `${show(s)} is not one of ${quoteList(c.enum)}.${near ? ` Did you mean "${near}"?` : ''}`;
  }
  if (c.pattern && !new RegExp(c.pattern).test(s)) {
    return `${show(s)} is not ${c.format ?? `matching ${c.pattern}`}.`;
  }
  if (c.maxLength !== undefined && s.length > c.maxLength) {
    return `${show(s)} has ${s.length} characters; at most ${c.maxLength} are allowed.`;
  }
  return undefined;
}

const TYPE_WORDS: Record<ValueSpec['type'], string> = {
  string: 'string',
  number: 'number',
  bool: 'bool',
  list: 'list',
  map: 'map',
  any: 'any value',
  'type-expression': 'type',
};

function describeType(spec: ValueSpec): string {
  if (spec.type === 'list') return `list of ${describeType(spec.items)}`;
  if (spec.type === 'map') return `map of ${describeType(spec.values)}`;
  return TYPE_WORDS[spec.type];
}

/**
 * Converts `value` to `spec`, reporting each problem at the sub-expression that produced it.
 * Returns undefined after a diagnostic (or for UNKNOWN), null for null.
 */
export function convert(
  value: Value,
  spec: ValueSpec,
  expr: Expr,
  path: string,
  sink: DiagnosticSink,
): Decoded | undefined {
  if (value === UNKNOWN) return undefined;
  if (value === null) return null;
  if (spec.type === 'any' || spec.type === 'type-expression') return value;
  const wrongType = (): undefined => {
    sink.error(
      `Invalid value for "${path}": expected ${describeType(spec)}, got ${typeName(value)}`,
      `The value is ${show(value)}.`,
      expr.range,
    );
    return undefined;
  };
  const badValue = (why: string): undefined => {
    sink.error(`Invalid value for "${path}"`, why, expr.range);
    return undefined;
  };
  switch (spec.type) {
    case 'string': {
      const s = asString(value);
      if (s === undefined) return wrongType();
      const problem = checkString(s, spec);
      return problem ? badValue(problem) : s;
    }
    case 'number': {
      const n = asNumber(value);
      if (n === undefined) return wrongType();
      if (spec.integer && !Number.isInteger(n)) return badValue(`${n} is not a whole number.`);
      if (spec.enum && !spec.enum.includes(n))
        return badValue(`${n} is not one of ${spec.enum.join(', ')}.`);
      if (spec.minimum !== undefined && n < spec.minimum) {
        return badValue(`${n} is less than the minimum ${spec.minimum}.`);
      }
      return n;
    }
    case 'bool': {
      const b = asBool(value);
      return b === undefined ? wrongType() : b;
    }
    case 'list': {
      if (!Array.isArray(value)) return wrongType();
      let ok = true;
      const items = value.map((v, i) => {
        const c = convertElement(v, spec.items, elementExpr(expr, i), `${path}[${i}]`, sink);
        if (c === undefined) ok = false;
        return c as Decoded;
      });
      return ok ? items : undefined;
    }
    case 'map': {
      if (!(value instanceof Map)) return wrongType();
      let ok = true;
      const out: Record<string, Decoded> = Object.create(null) as Record<string, Decoded>;
      const keyPattern = spec.keys ? new RegExp(spec.keys.pattern) : undefined;
      for (const [k, v] of value) {
        if (keyPattern && !keyPattern.test(k)) {
          sink.error(
            `Invalid key ${show(k)} in "${path}"`,
            `The key must be ${spec.keys!.format}.`,
            elementKeyExpr(expr, k).range,
          );
          ok = false;
          continue;
        }
        const c = convertElement(v, spec.values, elementExpr(expr, k), `${path}.${k}`, sink);
        if (c === undefined) ok = false;
        else out[k] = c;
      }
      return ok ? out : undefined;
    }
  }
}

function convertElement(
  v: Value,
  spec: ValueSpec,
  expr: Expr,
  path: string,
  sink: DiagnosticSink,
): Decoded | undefined {
  if (v === null) {
    sink.error(
      `Invalid value for "${path}"`,
      'Elements of lists and maps cannot be null.',
      expr.range,
    );
    return undefined;
  }
  const c = convert(v, spec, expr, path, sink);
  return c === null ? undefined : c;
}

/** Range of one map entry's key when written literally, else the whole expression's range. */
export function keyRange(
  attr: Attribute | undefined,
  key: string,
  fallback: SourceRange,
): SourceRange {
  return attr ? elementKeyExpr(attr.expr, key).range : fallback;
}

/** Range of one map entry's value (or list element) when written literally. */
export function valueRange(
  attr: Attribute | undefined,
  key: string | number,
  fallback: SourceRange,
): SourceRange {
  return attr ? elementExpr(attr.expr, key).range : fallback;
}
