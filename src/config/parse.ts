/**
 * HCL text -> loko's syntax tree ({@link Body}), using the tree-sitter HCL grammar (WASM).
 *
 * Every range comes from tree-sitter node positions. Literal text of templates is sliced from the
 * source by node offsets because the grammar drops whitespace between template chunks.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { Language, Parser, type Node } from 'web-tree-sitter';
import type {
  Attribute,
  BinaryOp,
  Block,
  Body,
  Expr,
  Label,
  ObjectItem,
  TemplatePart,
} from './ast.js';
import { DiagnosticSink } from './diagnostics.js';
import type { Diagnostic, SourceRange } from './types.js';

/** Result of parsing one file. `body` is empty when the file has syntax errors. */
export interface ParsedFile {
  body: Body;
  diagnostics: Diagnostic[];
  /** True when tree-sitter reported ERROR/MISSING nodes; the body is then not trustworthy. */
  syntaxError: boolean;
}

let parserPromise: Promise<Parser> | undefined;

/** One parser for the process: `Parser.init()` and loading the grammar are done once. */
function getParser(): Promise<Parser> {
  parserPromise ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    // Resolved through the package so it works from src/ (vitest) and from dist/ alike.
    const pkgDir = path.dirname(
      require.resolve('@tree-sitter-grammars/tree-sitter-hcl/package.json'),
    );
    const language = await Language.load(path.join(pkgDir, 'tree-sitter-hcl.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })();
  parserPromise.catch(() => {
    parserPromise = undefined;
  });
  return parserPromise;
}

/**
 * Parses HCL source. `file` is only used for ranges. Syntax errors become diagnostics (each
 * ERROR node as "Syntax error", each MISSING node as "Missing '<token>'") and an empty body.
 */
export async function parseHcl(src: string, file: string): Promise<ParsedFile> {
  const parser = await getParser();
  const tree = parser.parse(src);
  if (!tree) {
    return {
      body: { attributes: [], blocks: [] },
      diagnostics: [{ severity: 'error', summary: `Could not parse ${file}` }],
      syntaxError: true,
    };
  }
  try {
    const sink = new DiagnosticSink();
    const root = tree.rootNode;
    const unterminated = findUnterminatedString(root, src);
    if (root.hasError || unterminated) {
      if (root.hasError) collectSyntaxErrors(root, file, sink);
      if (unterminated) reportUnterminated(unterminated, file, sink);
      return { body: { attributes: [], blocks: [] }, diagnostics: sink.items, syntaxError: true };
    }
    const conv = new Converter(src, file, sink);
    let body: Body = { attributes: [], blocks: [] };
    for (const child of root.namedChildren) {
      if (child.type === 'body') body = conv.body(child);
      else if (child.type === 'object') {
        sink.error(
          'Unexpected JSON-style object',
          'A lokocfg file contains attributes (name = value) and blocks, not a bare { ... } object.',
          conv.range(child),
        );
      }
    }
    return { body, diagnostics: sink.items, syntaxError: sink.errorCount > 0 };
  } finally {
    tree.delete();
  }
}

function rangeOf(node: Node, file: string): SourceRange {
  return {
    file,
    start: { line: node.startPosition.row + 1, column: node.startPosition.column + 1 },
    end: { line: node.endPosition.row + 1, column: node.endPosition.column + 1 },
  };
}

function spanOf(first: Node, last: Node, file: string): SourceRange {
  return { file, start: rangeOf(first, file).start, end: rangeOf(last, file).end };
}

const CLOSERS: Record<string, string> = { '{': '}', '[': ']', '(': ')', '${': '}', '%{': '}' };
const MISSING_NAMES: Record<string, string> = {
  block_end: '}',
  object_end: '}',
  tuple_end: ']',
  quoted_template_end: '"',
  template_interpolation_end: '}',
  template_directive_end: '}',
};

const NOT_VALID = 'The file is not valid lokocfg (HCL) syntax.';

function collectSyntaxErrors(root: Node, file: string, sink: DiagnosticSink): void {
  let swallowed = false;
  const visit = (n: Node): boolean => {
    if (swallowed) return true;
    // Recovery often invents a heredoc ("<<" and its marker) after a stray token; that heredoc then
    // swallows the rest of the file, so one diagnostic at its start is all that is meaningful.
    if (n.type === 'heredoc_template' && n.descendantsOfType('heredoc_start')[0]?.hasError) {
      sink.error('Syntax error', 'Expected an expression here.', rangeOf(n, file));
      swallowed = true;
      return true;
    }
    if (n.isMissing) {
      const token = MISSING_NAMES[n.type] ?? (n.isNamed ? undefined : n.type);
      if (token) sink.error(`Missing '${token}'`, openedAt(n, token), rangeOf(n, file));
      else
        sink.error('Syntax error', `Expected ${n.type.replace(/_/g, ' ')} here.`, rangeOf(n, file));
      return true;
    }
    let reported = false;
    for (const c of n.children) {
      if (c.hasError || c.isMissing || c.isError) reported = visit(c) || reported;
    }
    if (n.isError && !reported && n !== root) {
      const snippet = (n.text.split('\n')[0] ?? '').trim().slice(0, 40);
      sink.error(
        'Syntax error',
        snippet
          ? `Unexpected '${snippet}' here.`
          : 'The text here is not valid lokocfg (HCL) syntax.',
        rangeOf(n, file),
      );
      reported = true;
    }
    return reported;
  };
  const reported = visit(root);
  // When recovery fails the whole file becomes one ERROR node without MISSING markers; an unclosed
  // bracket is then the likely cause, found by balancing the bracket tokens of the tree.
  if (root.isError) {
    const open: Node[] = [];
    const walk = (n: Node): void => {
      if (n.childCount === 0) {
        if (n.type in CLOSERS) open.push(n);
        else if (
          n.type === '}' ||
          n.type === ']' ||
          n.type === ')' ||
          n.type === 'template_interpolation_end'
        ) {
          const top = open[open.length - 1];
          if (
            top &&
            (CLOSERS[top.type] === n.type ||
              (n.type === 'template_interpolation_end' && top.type === '${'))
          ) {
            open.pop();
          }
        }
        return;
      }
      for (const c of n.children) walk(c);
    };
    walk(root);
    const eof = rangeOf(root, file).end;
    for (const o of open.reverse()) {
      const closer = CLOSERS[o.type] ?? '}';
      const at = rangeOf(o, file).start;
      sink.error(
        `Missing '${closer}'`,
        `The '${o.type}' at line ${at.line}, column ${at.column} is never closed.`,
        { file, start: eof, end: eof },
      );
    }
    if (!reported && open.length === 0) {
      sink.error('Syntax error', NOT_VALID, rangeOf(root, file));
    }
  }
}

/** The first quoted string whose text runs past the end of its line, and that line (1-based). */
interface Unterminated {
  quote: Node;
  line: number;
}

/**
 * HCL strings cannot contain a raw newline, so a quoted string whose literal text (outside
 * `${ ... }`) holds one is missing its closing quote on that line: tree-sitter then pairs it with
 * the next quote in the file, and everything after is misread. Returns the first such string in
 * the file, found from the tree's quote tokens.
 */
function findUnterminatedString(root: Node, src: string): Unterminated | undefined {
  let first: Unterminated | undefined;
  for (const quote of root.descendantsOfType('quoted_template_start')) {
    if (!quote || (first && quote.startIndex >= first.quote.startIndex)) continue;
    const siblings = quote.parent?.children ?? [];
    let pos = quote.endIndex;
    let end = quote.parent?.endIndex ?? quote.endIndex;
    let newline = -1;
    for (const c of siblings) {
      if (c.startIndex < quote.endIndex) continue;
      if (c.type === 'quoted_template_end' || c.type === 'quoted_template_start') {
        end = c.isMissing ? Math.max(c.startIndex, pos) : c.startIndex;
        break;
      }
      // An invalid escape (ERROR) swallows the closing quote; it is reported as itself.
      if (c.isError && newline < 0 && !src.slice(pos, c.startIndex).includes('\n')) {
        end = -1;
        break;
      }
      if (c.type === 'template_interpolation' || c.type === 'template_directive') {
        newline = src.slice(pos, c.startIndex).indexOf('\n');
        if (newline >= 0) {
          newline += pos;
          break;
        }
        pos = c.endIndex;
      }
    }
    if (end < 0) continue;
    if (newline < 0) {
      const at = src.slice(pos, end).indexOf('\n');
      if (at >= 0) newline = pos + at;
    }
    if (newline < 0) continue;
    const line =
      quote.startPosition.row +
      1 +
      (src.slice(quote.startIndex, newline).match(/\n/g)?.length ?? 0);
    first = { quote, line };
  }
  return first;
}

/**
 * One error at the opening quote of an unterminated string; syntax errors reported after it in
 * the file are its cascade (the rest of the file is paired up with the wrong quotes) and dropped.
 */
function reportUnterminated(u: Unterminated, file: string, sink: DiagnosticSink): void {
  const at = rangeOf(u.quote, file).start;
  const after = (d: Diagnostic): boolean =>
    d.range !== undefined &&
    (d.range.start.line > at.line ||
      (d.range.start.line === at.line && d.range.start.column >= at.column));
  // When recovery failed, the whole-file "not valid" error is the same mistake.
  const encloses = (d: Diagnostic): boolean =>
    d.summary === 'Syntax error' && d.detail === NOT_VALID;
  const kept = sink.items.filter((d) => !after(d) && !encloses(d));
  sink.items.length = 0;
  sink.items.push(...kept);
  sink.error(
    `Unterminated string: add '"' before the end of line ${u.line}`,
    `The string opened at line ${at.line}, column ${at.column} has no closing quote on its line; a quoted string cannot span lines (use a heredoc, <<EOT ... EOT, for text on several lines). Errors later in this file are not reported until it is fixed.`,
    rangeOf(u.quote, file),
  );
}

/** Detail for a missing closer: where the construct it closes starts. */
function openedAt(missing: Node, token: string): string {
  const kinds: Record<string, string> = {
    block: 'block',
    object: 'object',
    tuple: 'list',
    function_call: 'function call',
    template_interpolation: 'interpolation',
    quoted_template: 'string',
    string_lit: 'string',
  };
  for (let p = missing.parent; p; p = p.parent) {
    const kind = kinds[p.type];
    if (kind) {
      const at = p.startPosition;
      const name = p.type === 'block' ? ` "${p.namedChildren[0]?.text ?? ''}"` : '';
      return `The ${kind}${name} opened at line ${at.row + 1}, column ${at.column + 1} is not closed; add '${token}'.`;
    }
  }
  return `Add the missing '${token}' here.`;
}

const BINARY_OPS = new Set<string>([
  '+',
  '-',
  '*',
  '/',
  '%',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '&&',
  '||',
]);

/** Converts tree-sitter nodes of a parse without syntax errors into loko's tree. */
class Converter {
  constructor(
    private readonly src: string,
    private readonly file: string,
    private readonly sink: DiagnosticSink,
  ) {}

  range(node: Node): SourceRange {
    return rangeOf(node, this.file);
  }

  body(node: Node): Body {
    const body: Body = { attributes: [], blocks: [] };
    for (const child of node.namedChildren) {
      if (child.type === 'attribute') body.attributes.push(this.attribute(child));
      else if (child.type === 'block') body.blocks.push(this.block(child));
    }
    return body;
  }

  private attribute(node: Node): Attribute {
    const kids = node.namedChildren.filter((c) => c.type !== 'comment');
    const name = kids[0]!;
    const exprNode = kids.find((c) => c.type === 'expression')!;
    return {
      name: name.text,
      nameRange: this.range(name),
      expr: this.expression(exprNode),
      range: this.range(node),
    };
  }

  private block(node: Node): Block {
    const kids = node.namedChildren.filter((c) => c.type !== 'comment');
    const typeNode = kids[0]!;
    const labels: Label[] = [];
    let body: Body = { attributes: [], blocks: [] };
    let headerEnd: Node = typeNode;
    for (const c of kids.slice(1)) {
      if (c.type === 'string_lit') {
        labels.push({ value: this.stringLit(c), range: this.range(c) });
        headerEnd = c;
      } else if (c.type === 'identifier') {
        labels.push({ value: c.text, range: this.range(c) });
        headerEnd = c;
      } else if (c.type === 'body') {
        body = this.body(c);
      }
    }
    return {
      type: typeNode.text,
      typeRange: this.range(typeNode),
      labels,
      headerRange: spanOf(typeNode, headerEnd, this.file),
      body,
      range: this.range(node),
    };
  }

  /** `expression` nodes wrap a flattened term: a primary followed by attribute/index accessors. */
  private expression(node: Node): Expr {
    return this.term(node.children.filter((c) => c.type !== 'comment'));
  }

  private term(nodes: Node[]): Expr {
    const first = nodes[0];
    if (!first) throw new Error('empty expression node');
    let expr: Expr;
    let rest: Node[];
    if (first.type === '(') {
      expr = this.expression(nodes[1]!);
      rest = nodes.slice(3);
    } else {
      expr = this.primary(first);
      rest = nodes.slice(1);
    }
    for (const post of rest) {
      const range = spanOf(first, post, this.file);
      if (post.type === 'get_attr') {
        const ident = post.namedChildren.find((c) => c.type === 'identifier')!;
        expr = { kind: 'getattr', target: expr, name: ident.text, range };
      } else if (post.type === 'index') {
        const inner = post.namedChildren[0]!;
        if (inner.type === 'legacy_index') {
          const digits = inner.text.replace(/^\./, '');
          const key: Expr = { kind: 'literal', value: Number(digits), range: this.range(inner) };
          expr = { kind: 'index', target: expr, key, range };
        } else {
          const keyNode = inner.namedChildren.find((c) => c.type === 'expression')!;
          expr = { kind: 'index', target: expr, key: this.expression(keyNode), range };
        }
      } else if (post.type === 'splat') {
        expr = { kind: 'unsupported', what: 'Splat expressions ([*] and .*)', range };
      }
    }
    return expr;
  }

  private primary(node: Node): Expr {
    const range = this.range(node);
    switch (node.type) {
      case 'expression':
        return this.expression(node);
      case 'literal_value': {
        const lit = node.namedChildren[0]!;
        if (lit.type === 'numeric_lit') return { kind: 'literal', value: Number(lit.text), range };
        if (lit.type === 'bool_lit') return { kind: 'literal', value: lit.text === 'true', range };
        if (lit.type === 'null_lit') return { kind: 'literal', value: null, range };
        return { kind: 'literal', value: this.stringLit(lit), range };
      }
      case 'template_expr': {
        const inner = node.namedChildren[0]!;
        return inner.type === 'heredoc_template' ? this.heredoc(inner) : this.quoted(inner);
      }
      case 'collection_value': {
        const inner = node.namedChildren[0]!;
        if (inner.type === 'tuple') {
          const items = inner.namedChildren
            .filter((c) => c.type === 'expression')
            .map((c) => this.expression(c));
          return { kind: 'tuple', items, range };
        }
        const items: ObjectItem[] = inner.namedChildren
          .filter((c) => c.type === 'object_elem')
          .map((el) => ({
            key: this.expression(el.childForFieldName('key')!),
            value: this.expression(el.childForFieldName('val')!),
            range: this.range(el),
          }));
        return { kind: 'object', items, range };
      }
      case 'variable_expr':
        return { kind: 'variable', name: node.text, range };
      case 'function_call': {
        const ident = node.namedChildren.find((c) => c.type === 'identifier')!;
        const argsNode = node.namedChildren.find((c) => c.type === 'function_arguments');
        const args = (argsNode?.namedChildren ?? [])
          .filter((c) => c.type === 'expression')
          .map((c) => this.expression(c));
        if (argsNode?.namedChildren.some((c) => c.type === 'ellipsis')) {
          return { kind: 'unsupported', what: 'Argument expansion (...)', range };
        }
        return { kind: 'call', name: ident.text, nameRange: this.range(ident), args, range };
      }
      case 'conditional': {
        const [cond, then, els] = node.namedChildren.filter((c) => c.type === 'expression');
        return {
          kind: 'conditional',
          cond: this.expression(cond!),
          then: this.expression(then!),
          else: this.expression(els!),
          range,
        };
      }
      case 'operation':
        return this.operation(node.namedChildren[0]!);
      case 'for_expr':
        return { kind: 'unsupported', what: 'For expressions', range };
      default:
        return { kind: 'unsupported', what: `"${node.type}" expressions`, range };
    }
  }

  private operation(node: Node): Expr {
    const range = this.range(node);
    const kids = node.children.filter((c) => c.type !== 'comment');
    if (node.type === 'unary_operation') {
      const op = kids[0]!.type === '!' ? '!' : '-';
      return { kind: 'unary', op, operand: this.term(kids.slice(1)), range };
    }
    // Operands are flattened terms, so the operator is the only operator token among the children.
    const at = kids.findIndex((c) => !c.isNamed && BINARY_OPS.has(c.type));
    return {
      kind: 'binary',
      op: kids[at]!.type as BinaryOp,
      left: this.term(kids.slice(0, at)),
      right: this.term(kids.slice(at + 1)),
      range,
    };
  }

  /** A string without interpolations (labels, literal values). */
  private stringLit(node: Node): string {
    const kids = node.children;
    const start = kids[0]!;
    const end = kids[kids.length - 1]!;
    return this.unescapeQuoted(this.src.slice(start.endIndex, end.startIndex), this.range(node));
  }

  private quoted(node: Node): Expr {
    const kids = node.children;
    const start = kids[0]!;
    const end = kids[kids.length - 1]!;
    const parts = this.templateParts(kids.slice(1, -1), start.endIndex, end.startIndex, (t) =>
      this.unescapeQuoted(t, this.range(node)),
    );
    return this.template(parts, this.range(node));
  }

  private heredoc(node: Node): Expr {
    const kids = node.children;
    const flush = kids[0]!.text === '<<-';
    const open = kids[1]!;
    const close = kids[kids.length - 1]!;
    // Content starts on the line after the opening marker and ends where the closing marker's line
    // starts (the closing marker may be indented for <<-).
    let from = open.endIndex;
    if (this.src.startsWith('\r\n', from)) from += 2;
    else if (this.src[from] === '\n') from += 1;
    const to = Math.max(from, close.startIndex - close.startPosition.column);
    let parts = this.templateParts(kids.slice(2, -1), from, to, (t) => unescapeTemplateMarkers(t));
    if (flush) parts = stripIndent(parts);
    return this.template(parts, this.range(node));
  }

  private template(parts: TemplatePart[], range: SourceRange): Expr {
    if (parts.every((p) => p.kind === 'text')) {
      return {
        kind: 'literal',
        value: parts.map((p) => (p.kind === 'text' ? p.text : '')).join(''),
        range,
      };
    }
    // "${x}" alone keeps x's type (number, list, ...), as in HCL.
    const only = parts.length === 1 ? parts[0] : undefined;
    if (only?.kind === 'interp') return only.expr;
    return { kind: 'template', parts, range };
  }

  private templateParts(
    kids: Node[],
    from: number,
    to: number,
    unescape: (raw: string) => string,
  ): TemplatePart[] {
    const parts: TemplatePart[] = [];
    const strip: { left: boolean; right: boolean }[] = [];
    let pos = from;
    for (const k of kids) {
      if (k.type !== 'template_interpolation' && k.type !== 'template_directive') continue;
      if (k.startIndex > pos) parts.push({ kind: 'text', text: this.src.slice(pos, k.startIndex) });
      pos = k.endIndex;
      if (k.type === 'template_directive') {
        parts.push({
          kind: 'interp',
          expr: {
            kind: 'unsupported',
            what: 'Template directives (%{ ... })',
            range: this.range(k),
          },
        });
        continue;
      }
      const inner = k.children;
      const exprNode = inner.find((c) => c.type === 'expression');
      const markers = inner.filter((c) => c.type === 'strip_marker');
      const left = markers.some(
        (m) => exprNode === undefined || m.startIndex < exprNode.startIndex,
      );
      const right = markers.some(
        (m) => exprNode !== undefined && m.startIndex > exprNode.startIndex,
      );
      if (!exprNode) {
        this.sink.error(
          'Empty interpolation',
          'Write an expression inside ${ ... }.',
          this.range(k),
        );
        continue;
      }
      strip[parts.length] = { left, right };
      parts.push({ kind: 'interp', expr: this.expression(exprNode) });
    }
    if (to > pos) parts.push({ kind: 'text', text: this.src.slice(pos, to) });
    // `${~ x}` / `${x ~}` trim the whitespace next to the interpolation, as in HCL.
    strip.forEach((s, i) => {
      if (!s) return;
      const before = parts[i - 1];
      const after = parts[i + 1];
      if (s.left && before?.kind === 'text') before.text = before.text.replace(/\s+$/, '');
      if (s.right && after?.kind === 'text') after.text = after.text.replace(/^\s+/, '');
    });
    return parts.map((p) => (p.kind === 'text' ? { kind: 'text', text: unescape(p.text) } : p));
  }

  private unescapeQuoted(raw: string, range: SourceRange): string {
    return raw.replace(
      /\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([\s\S]))|\$\$\{|%%\{/g,
      (m, u4: string | undefined, u8: string | undefined, ch: string | undefined) => {
        if (m === '$${') return '${';
        if (m === '%%{') return '%{';
        if (u4) return String.fromCharCode(parseInt(u4, 16));
        if (u8) return String.fromCodePoint(parseInt(u8, 16));
        const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };
        const out = ch === undefined ? undefined : simple[ch];
        if (out === undefined) {
          this.sink.error(
            'Invalid escape sequence',
            `"\\${ch ?? ''}" is not a valid escape; use \\n, \\r, \\t, \\", \\\\, \\uNNNN or \\UNNNNNNNN.`,
            range,
          );
          return m;
        }
        return out;
      },
    );
  }
}

function unescapeTemplateMarkers(raw: string): string {
  return raw.replace(/\$\$\{/g, '${').replace(/%%\{/g, '%{');
}

/**
 * `<<-` heredocs drop the indentation shared by all non-blank lines, as in HCL. Interpolations count
 * as non-blank content, so a placeholder character stands in for them while lines are measured.
 */
function stripIndent(parts: TemplatePart[]): TemplatePart[] {
  const HOLE = '\uE000';
  const exprs = parts.flatMap((p) => (p.kind === 'interp' ? [p.expr] : []));
  const joined = parts.map((p) => (p.kind === 'text' ? p.text : HOLE)).join('');
  const lines = joined.split('\n');
  let min = Infinity;
  for (const line of lines) {
    const indent = /^[ \t]*/.exec(line)![0].length;
    if (indent < line.length) min = Math.min(min, indent);
  }
  if (!Number.isFinite(min) || min === 0) return parts;
  const stripped = lines
    .map((l) => l.slice(Math.min(min, /^[ \t]*/.exec(l)![0].length)))
    .join('\n');
  const out: TemplatePart[] = [];
  stripped.split(HOLE).forEach((text, i) => {
    if (i > 0) out.push({ kind: 'interp', expr: exprs[i - 1]! });
    if (text !== '') out.push({ kind: 'text', text });
  });
  return out;
}
