/**
 * Evaluation of lokocfg expressions: literals, templates, lists, objects, `var.<name>` with
 * attribute/index access, function calls, unary/binary operators and conditionals.
 *
 * Errors become diagnostics at the offending sub-expression and the result is {@link UNKNOWN}, so
 * evaluation always continues and each mistake is reported once.
 */
import type { Expr } from './ast.js';
import { asBool, asNumber, asString } from './convert.js';
import { DiagnosticSink, formatPosition, quoteList, suggest } from './diagnostics.js';
import { FUNCTIONS, type FunctionSpec } from './functions.js';
import type { SourceRange } from './types.js';
import { UNKNOWN, show, typeName, valuesEqual, type Value } from './values.js';

/** What an expression may use where it is evaluated. */
export interface EvalContext {
  sink: DiagnosticSink;
  /**
   * Resolves `var.<name>`; reports and returns UNKNOWN when the variable has no value. Absent in
   * contexts that allow literals only (variable files, variable defaults).
   */
  lookupVar?: (name: string, range: SourceRange) => Value;
  /** Whether function calls are allowed. */
  functions: boolean;
  /** Environment for `env()`. */
  env: Record<string, string | undefined>;
  /** Why variables or functions are not allowed here, appended to those diagnostics. */
  restriction?: string;
  /** Declared variable names, for did-you-mean on bare identifiers. */
  variableNames?: readonly string[];
}

const SUBSET =
  'loko evaluates a subset of HCL: literals, "${...}" templates and heredocs, lists, maps, ' +
  'var.<name>, the functions file(), pathexpand() and env(), operators and conditionals.';

/** Evaluates `expr`; never throws for user mistakes. */
export function evaluate(expr: Expr, ctx: EvalContext): Value {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'template':
      return evalTemplate(expr, ctx);
    case 'tuple':
      return expr.items.map((item) => evaluate(item, ctx));
    case 'object':
      return evalObject(expr, ctx);
    case 'variable':
      return evalBareVariable(expr, ctx);
    case 'getattr':
      if (expr.target.kind === 'variable' && expr.target.name === 'var') {
        return lookupVar(expr.name, expr.range, ctx);
      }
      return getAttr(evaluate(expr.target, ctx), expr.name, expr.range, ctx);
    case 'index': {
      if (expr.target.kind === 'variable' && expr.target.name === 'var') {
        const key = evaluate(expr.key, ctx);
        if (key === UNKNOWN) return UNKNOWN;
        if (typeof key !== 'string') {
          ctx.sink.error(
            'Invalid variable reference',
            'Use var.<name> or var["<name>"].',
            expr.key.range,
          );
          return UNKNOWN;
        }
        return lookupVar(key, expr.range, ctx);
      }
      return index(evaluate(expr.target, ctx), evaluate(expr.key, ctx), expr, ctx);
    }
    case 'call':
      return evalCall(expr, ctx);
    case 'conditional': {
      const cond = evaluate(expr.cond, ctx);
      if (cond === UNKNOWN) return UNKNOWN;
      const b = asBool(cond);
      if (b === undefined) {
        ctx.sink.error(
          'Invalid condition',
          `The condition must be a bool, got ${typeName(cond)} ${show(cond)}.`,
          expr.cond.range,
        );
        return UNKNOWN;
      }
      // Only the chosen branch is evaluated, so `x != "" ? x : env("Y")` does not need Y.
      return evaluate(b ? expr.then : expr.else, ctx);
    }
    case 'unary': {
      const v = evaluate(expr.operand, ctx);
      if (v === UNKNOWN) return UNKNOWN;
      if (expr.op === '!') {
        const b = asBool(v);
        if (b !== undefined) return !b;
        return operandError('!', 'bool', v, expr.operand.range, ctx);
      }
      const n = asNumber(v);
      if (n !== undefined) return -n;
      return operandError('-', 'number', v, expr.operand.range, ctx);
    }
    case 'binary':
      return evalBinary(expr, ctx);
    case 'unsupported':
      ctx.sink.error(`${expr.what} are not supported`, SUBSET, expr.range);
      return UNKNOWN;
  }
}

function evalTemplate(expr: Extract<Expr, { kind: 'template' }>, ctx: EvalContext): Value {
  let out = '';
  let unknown = false;
  for (const part of expr.parts) {
    if (part.kind === 'text') {
      out += part.text;
      continue;
    }
    const v = evaluate(part.expr, ctx);
    if (v === UNKNOWN) {
      unknown = true;
      continue;
    }
    const s = asString(v);
    if (s === undefined) {
      ctx.sink.error(
        'Invalid template interpolation value',
        `Only strings, numbers and bools can be interpolated into a string, got ${typeName(v)}.`,
        part.expr.range,
      );
      unknown = true;
      continue;
    }
    out += s;
  }
  return unknown ? UNKNOWN : out;
}

function evalObject(expr: Extract<Expr, { kind: 'object' }>, ctx: EvalContext): Value {
  const out = new Map<string, Value>();
  const seen = new Map<string, SourceRange>();
  for (const item of expr.items) {
    let key: string | undefined;
    // A bare identifier key is its own name, as in HCL (`{ app = "web" }`).
    if (item.key.kind === 'variable') key = item.key.name;
    else {
      const k = evaluate(item.key, ctx);
      if (k === UNKNOWN) continue;
      key = asString(k);
      if (key === undefined) {
        ctx.sink.error(
          'Invalid object key',
          `Object keys must be strings, got ${typeName(k)}.`,
          item.key.range,
        );
        continue;
      }
    }
    const first = seen.get(key);
    if (first) {
      ctx.sink.error(
        `Duplicate object key "${key}"`,
        `"${key}" is already set at ${formatPosition(first)}; each key may appear once.`,
        item.key.range,
      );
      continue;
    }
    seen.set(key, item.key.range);
    out.set(key, evaluate(item.value, ctx));
  }
  return out;
}

function evalBareVariable(expr: Extract<Expr, { kind: 'variable' }>, ctx: EvalContext): Value {
  if (expr.name === 'var') {
    ctx.sink.error(
      'Incomplete variable reference',
      'Name the variable: var.<name>, for example var.metro.',
      expr.range,
    );
    return UNKNOWN;
  }
  const near = ctx.variableNames ? suggest(expr.name, ctx.variableNames) : undefined;
  const hint = near ? ` Did you mean var.${near}?` : '';
  ctx.sink.error(
    `Unknown name "${expr.name}"`,
    `Variables are referenced as var.<name>; if you meant the text "${expr.name}", quote it.${hint}`,
    expr.range,
  );
  return UNKNOWN;
}

function lookupVar(name: string, range: SourceRange, ctx: EvalContext): Value {
  if (!ctx.lookupVar) {
    ctx.sink.error(
      'Variables not allowed here',
      `var.${name} cannot be used here${ctx.restriction ? `: ${ctx.restriction}` : '.'}`,
      range,
    );
    return UNKNOWN;
  }
  return ctx.lookupVar(name, range);
}

function getAttr(target: Value, name: string, range: SourceRange, ctx: EvalContext): Value {
  if (target === UNKNOWN) return UNKNOWN;
  if (target instanceof Map) {
    const v = target.get(name);
    if (v !== undefined) return v;
    const near = suggest(name, [...target.keys()]);
    ctx.sink.error(
      `Unsupported attribute "${name}"`,
      `This object has no attribute "${name}".${near ? ` Did you mean "${near}"?` : ''}`,
      range,
    );
    return UNKNOWN;
  }
  ctx.sink.error(
    'Unsupported attribute',
    `Cannot access attribute "${name}" of a ${typeName(target)} value.`,
    range,
  );
  return UNKNOWN;
}

function index(
  target: Value,
  key: Value,
  expr: Extract<Expr, { kind: 'index' }>,
  ctx: EvalContext,
): Value {
  if (target === UNKNOWN || key === UNKNOWN) return UNKNOWN;
  if (Array.isArray(target)) {
    const i = asNumber(key);
    if (i === undefined || !Number.isInteger(i)) {
      ctx.sink.error(
        'Invalid index',
        `A list index must be a whole number, got ${show(key)}.`,
        expr.key.range,
      );
      return UNKNOWN;
    }
    if (i < 0 || i >= target.length) {
      ctx.sink.error(
        'Invalid index',
        `Index ${i} is out of range: the list has ${target.length} element(s).`,
        expr.key.range,
      );
      return UNKNOWN;
    }
    return target[i]!;
  }
  if (target instanceof Map) {
    const k = asString(key);
    if (k === undefined) {
      ctx.sink.error(
        'Invalid index',
        `An object key must be a string, got ${typeName(key)}.`,
        expr.key.range,
      );
      return UNKNOWN;
    }
    const v = target.get(k);
    if (v === undefined) {
      ctx.sink.error('Invalid index', `The object has no element "${k}".`, expr.key.range);
      return UNKNOWN;
    }
    return v;
  }
  ctx.sink.error('Invalid index', `A ${typeName(target)} value cannot be indexed.`, expr.range);
  return UNKNOWN;
}

function evalCall(expr: Extract<Expr, { kind: 'call' }>, ctx: EvalContext): Value {
  const fn: FunctionSpec | undefined = Object.hasOwn(FUNCTIONS, expr.name)
    ? FUNCTIONS[expr.name]
    : undefined;
  if (!fn) {
    const names = Object.keys(FUNCTIONS);
    const near = suggest(expr.name, names);
    ctx.sink.error(
      `Call to unknown function "${expr.name}"`,
      `${near ? `Did you mean "${near}"? ` : ''}Available functions: ${quoteList(names)}.`,
      expr.nameRange,
    );
    return UNKNOWN;
  }
  if (!ctx.functions) {
    ctx.sink.error(
      'Functions not allowed here',
      `${expr.name}() cannot be used here${ctx.restriction ? `: ${ctx.restriction}` : '.'}`,
      expr.range,
    );
    return UNKNOWN;
  }
  const n = expr.args.length;
  if (n < fn.minArgs || n > fn.maxArgs) {
    ctx.sink.error(
      'Wrong number of arguments',
      `${fn.signature} takes ${fn.minArgs === fn.maxArgs ? fn.minArgs : `${fn.minArgs} or ${fn.maxArgs}`} argument(s), got ${n}.`,
      expr.range,
    );
    return UNKNOWN;
  }
  const args: string[] = [];
  let unknown = false;
  for (const a of expr.args) {
    const v = evaluate(a, ctx);
    if (v === UNKNOWN) {
      unknown = true;
      continue;
    }
    const s = asString(v);
    if (s === undefined) {
      ctx.sink.error(
        'Invalid function argument',
        `${fn.signature} expects strings, got ${typeName(v)}.`,
        a.range,
      );
      unknown = true;
      continue;
    }
    args.push(s);
  }
  if (unknown) return UNKNOWN;
  const result = fn.call(args, { env: ctx.env, file: expr.range.file });
  if (!result.ok) {
    ctx.sink.error(
      result.summary,
      result.detail,
      result.argIndex === undefined ? expr.range : expr.args[result.argIndex]!.range,
    );
    return UNKNOWN;
  }
  return result.value;
}

function operandError(
  op: string,
  want: string,
  got: Value,
  range: SourceRange,
  ctx: EvalContext,
): Value {
  ctx.sink.error(
    'Invalid operand',
    `The "${op}" operator needs a ${want}, got ${typeName(got)} ${show(got)}.`,
    range,
  );
  return UNKNOWN;
}

function evalBinary(expr: Extract<Expr, { kind: 'binary' }>, ctx: EvalContext): Value {
  const { op } = expr;
  const left = evaluate(expr.left, ctx);
  if (op === '&&' || op === '||') {
    if (left === UNKNOWN) return UNKNOWN;
    const l = asBool(left);
    if (l === undefined) return operandError(op, 'bool', left, expr.left.range, ctx);
    const right = evaluate(expr.right, ctx);
    if (right === UNKNOWN) return UNKNOWN;
    const r = asBool(right);
    if (r === undefined) return operandError(op, 'bool', right, expr.right.range, ctx);
    return op === '&&' ? l && r : l || r;
  }
  const right = evaluate(expr.right, ctx);
  if (left === UNKNOWN || right === UNKNOWN) return UNKNOWN;
  if (op === '==') return valuesEqual(left, right);
  if (op === '!=') return !valuesEqual(left, right);
  const l = asNumber(left);
  if (l === undefined) return operandError(op, 'number', left, expr.left.range, ctx);
  const r = asNumber(right);
  if (r === undefined) return operandError(op, 'number', right, expr.right.range, ctx);
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    case '/':
    case '%':
      if (r === 0) {
        ctx.sink.error('Division by zero', 'The right-hand operand is zero.', expr.right.range);
        return UNKNOWN;
      }
      return op === '/' ? l / r : l % r;
    case '<':
      return l < r;
    case '<=':
      return l <= r;
    case '>':
      return l > r;
    case '>=':
      return l >= r;
  }
}
