/**
 * loko's own small syntax tree for lokocfg files, built from the tree-sitter parse (see parse.ts).
 *
 * Keeping our own tree means evaluation and decoding never touch WASM objects (which must be freed)
 * and every node carries the {@link SourceRange} the diagnostics need.
 */
import type { SourceRange } from './types.js';

/** `name = expr`. */
export interface Attribute {
  name: string;
  nameRange: SourceRange;
  expr: Expr;
  /** From the name to the end of the expression. */
  range: SourceRange;
}

/** A block label, e.g. the `"equinixmetal"` of `cluster "equinixmetal" {`. */
export interface Label {
  value: string;
  range: SourceRange;
}

/** `type "label" ... { body }`. */
export interface Block {
  type: string;
  typeRange: SourceRange;
  labels: Label[];
  /** The block type and its labels: where "missing attribute" and "defaulted value" point. */
  headerRange: SourceRange;
  body: Body;
  range: SourceRange;
}

/** The attributes and blocks of a file or block, in source order. */
export interface Body {
  attributes: Attribute[];
  blocks: Block[];
}

export type BinaryOp =
  '+' | '-' | '*' | '/' | '%' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

/** One piece of a template: literal text or an interpolation. */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'interp'; expr: Expr };

/** An expression of the lokocfg subset. `unsupported` keeps parsing going past syntax loko skips. */
export type Expr =
  | { kind: 'literal'; value: string | number | boolean | null; range: SourceRange }
  | { kind: 'template'; parts: TemplatePart[]; range: SourceRange }
  | { kind: 'tuple'; items: Expr[]; range: SourceRange }
  | { kind: 'object'; items: ObjectItem[]; range: SourceRange }
  | { kind: 'variable'; name: string; range: SourceRange }
  | { kind: 'getattr'; target: Expr; name: string; range: SourceRange }
  | { kind: 'index'; target: Expr; key: Expr; range: SourceRange }
  | { kind: 'call'; name: string; nameRange: SourceRange; args: Expr[]; range: SourceRange }
  | { kind: 'conditional'; cond: Expr; then: Expr; else: Expr; range: SourceRange }
  | { kind: 'unary'; op: '-' | '!'; operand: Expr; range: SourceRange }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr; range: SourceRange }
  | { kind: 'unsupported'; what: string; range: SourceRange };

/** `key = value` inside `{ ... }`. A bare identifier key is the literal string key. */
export interface ObjectItem {
  key: Expr;
  value: Expr;
  range: SourceRange;
}

/**
 * The sub-expression that produced element `key` of a literal list/object, so a diagnostic about
 * one element points at that element. For any other expression (e.g. `var.x`) it is `expr` itself.
 */
export function elementExpr(expr: Expr, key: number | string): Expr {
  if (expr.kind === 'tuple' && typeof key === 'number') return expr.items[key] ?? expr;
  if (expr.kind === 'object' && typeof key === 'string') {
    for (const item of expr.items) {
      if (staticKey(item.key) === key) return item.value;
    }
  }
  return expr;
}

/** Like {@link elementExpr} but for the key of an object element. */
export function elementKeyExpr(expr: Expr, key: string): Expr {
  if (expr.kind === 'object') {
    for (const item of expr.items) {
      if (staticKey(item.key) === key) return item.key;
    }
  }
  return expr;
}

/** The key of an object element when it is known without evaluation (`k = ...` or `"k" = ...`). */
export function staticKey(key: Expr): string | undefined {
  if (key.kind === 'variable') return key.name;
  if (key.kind === 'literal' && typeof key.value === 'string') return key.value;
  if (key.kind === 'template' && key.parts.every((p) => p.kind === 'text')) {
    return key.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
  }
  return undefined;
}

/** Names of all `var.<name>` / `var["<name>"]` references in a body, for unused-value warnings. */
export function variableReferences(body: Body, out = new Set<string>()): Set<string> {
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case 'getattr':
        if (e.target.kind === 'variable' && e.target.name === 'var') out.add(e.name);
        else visit(e.target);
        return;
      case 'index':
        if (e.target.kind === 'variable' && e.target.name === 'var') {
          const k = staticKey(e.key);
          if (k !== undefined) out.add(k);
        } else visit(e.target);
        visit(e.key);
        return;
      case 'template':
        for (const p of e.parts) if (p.kind === 'interp') visit(p.expr);
        return;
      case 'tuple':
        e.items.forEach(visit);
        return;
      case 'object':
        for (const i of e.items) {
          visit(i.key);
          visit(i.value);
        }
        return;
      case 'call':
        e.args.forEach(visit);
        return;
      case 'conditional':
        visit(e.cond);
        visit(e.then);
        visit(e.else);
        return;
      case 'unary':
        visit(e.operand);
        return;
      case 'binary':
        visit(e.left);
        visit(e.right);
        return;
      default:
        return;
    }
  };
  for (const a of body.attributes) visit(a.expr);
  for (const b of body.blocks) variableReferences(b.body, out);
  return out;
}
