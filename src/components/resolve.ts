/**
 * Which components an apply/render works on, with their typed configs, in dependency order.
 * Pure: reads the loaded configuration and the registry, talks to nothing.
 */
import { emptyDecodedBody } from '../config/decode.js';
import { DiagnosticSink, formatPosition, quoteList, suggest } from '../config/diagnostics.js';
import type { Diagnostic, LoadResult, SourceRange } from '../config/types.js';
import { LokoError } from '../util/errors.js';
import { COMPONENTS, unknownComponentError } from './registry.js';
import type { ComponentDefinition } from './types.js';

/** A component chosen for an apply/render, with its decoded config. */
export interface ConfiguredComponent {
  def: ComponentDefinition;
  /** What `def.decode` returned (from the block's body, or from an empty body). */
  config: unknown;
  /** The configuration has a `component "<name>"` block for it. */
  configured: boolean;
  /** The block's header, when configured. */
  where?: SourceRange;
}

/** Options of {@link resolveComponents}. */
export interface ResolveOptions {
  /**
   * Exactly these components (command-line names; unknown ones are a LokoError listing the valid
   * names). Unset: every configured component, plus the bootstrap ones with `includeBootstrap`.
   */
  names?: readonly string[];
  /** Without `names`: add every bootstrap component, configured or not. */
  includeBootstrap: boolean;
  /** The registry (tests pass their own); default {@link COMPONENTS}. */
  registry?: readonly ComponentDefinition[];
  /** Receives the warnings of the components' decode (errors throw). */
  warnings?: Diagnostic[];
}

/**
 * A component's configuration is invalid: `diagnostics` carry file:line:col like config errors
 * (the CLI prints them before the message).
 */
export class ComponentConfigError extends LokoError {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic[]) {
    const n = diagnostics.filter((d) => d.severity === 'error').length;
    super(`the component configuration has ${n} error${n === 1 ? '' : 's'}`, {
      hint: 'Fix the problems listed above; `loko config validate` checks the configuration offline.',
    });
    this.name = 'ComponentConfigError';
    this.diagnostics = diagnostics;
  }
}

/**
 * The components to work on, each decoded with `def.decode` (the body decoded at load time, or an
 * empty body when the component has no block), in dependency order: a component comes after
 * every member of the set it (transitively) `dependsOn`, ties keep registry order. Dependencies outside the set
 * are not added (see `missingDependencies`).
 *
 * Throws: a LokoError for an unknown name (argument or `component` block, with did-you-mean and
 * the valid names); {@link ComponentConfigError} when a decode reports errors; a plain Error for
 * programming errors (a dependency cycle or an unknown `dependsOn` name in the registry, a load
 * made without `componentSpecs`).
 */
export function resolveComponents(
  load: Pick<LoadResult, 'components'>,
  opts: ResolveOptions,
): ConfiguredComponent[] {
  const registry = opts.registry ?? COMPONENTS;
  const byName = new Map(registry.map((c) => [c.name, c]));
  for (const [name, block] of load.components) {
    if (byName.has(name)) continue;
    const near = suggest(name, [...byName.keys()]);
    throw new LokoError(
      `${formatPosition(block.headerRange)}: unknown component "${name}" in the configuration`,
      {
        hint: `${near ? `Did you mean "${near}"? ` : ''}Valid components: ${quoteList([...byName.keys()])}.`,
      },
    );
  }

  let chosen: ComponentDefinition[];
  if (opts.names) {
    const seen = new Set<string>();
    chosen = [];
    for (const name of opts.names) {
      const def = byName.get(name);
      if (!def) throw unknownComponentError(name, registry);
      if (!seen.has(name)) chosen.push(def);
      seen.add(name);
    }
  } else {
    chosen = registry.filter(
      (c) => load.components.has(c.name) || (opts.includeBootstrap && c.bootstrap),
    );
  }

  const sink = new DiagnosticSink();
  const out = dependencyOrder(chosen, registry).map((def): ConfiguredComponent => {
    const block = load.components.get(def.name);
    if (block && !block.body) {
      throw new Error(
        `internal: component "${def.name}" has no decoded body: load the configuration with componentSpecs (src/components/registry.ts componentSpecs()) and stop on its errors`,
      );
    }
    if (!block) requireNoMandatoryAttributes(def);
    const body = block?.body ?? emptyDecodedBody(def.spec);
    const config = def.decode(body, sink, block?.headerRange);
    return {
      def,
      config,
      configured: block !== undefined,
      ...(block ? { where: block.headerRange } : {}),
    };
  });
  if (sink.errorCount > 0) throw new ComponentConfigError(sink.items);
  opts.warnings?.push(...sink.items);
  return out;
}

/**
 * A component without a block is decoded from an empty body; one with required attributes cannot
 * be (e.g. `metallb` needs its address pools). Throws a LokoError saying what block to add.
 */
function requireNoMandatoryAttributes(def: ComponentDefinition): void {
  const required = def.spec.attributes.filter((a) => a.required).map((a) => a.name);
  const oneOf = def.spec.requireOneOf ?? [];
  if (required.length === 0 && oneOf.length === 0) return;
  const needs = [...required, ...(oneOf.length > 0 ? [oneOf.join(' or ')] : [])];
  throw new LokoError(
    `component "${def.name}" has no block in the configuration, and it needs ${needs.join(', ')}`,
    {
      hint: `Add component "${def.name}" { ${needs[0]} = ... } to a .lokocfg file (see docs/components/${def.name}.md), and pass it with -c.`,
    },
  );
}

/**
 * `set` sorted so each component follows the members of `set` it depends on, directly or through
 * components outside the set; ties keep registry order. Throws (a programming error) on a cycle or a `dependsOn` name not in the registry.
 */
export function dependencyOrder(
  set: readonly ComponentDefinition[],
  registry: readonly ComponentDefinition[] = COMPONENTS,
): ComponentDefinition[] {
  const index = new Map(registry.map((c, i) => [c.name, i]));
  for (const c of registry) {
    for (const d of c.dependsOn) {
      if (!index.has(d)) throw new Error(`component "${c.name}" depends on unknown "${d}"`);
    }
  }
  assertAcyclic(registry);
  const members = new Set(set.map((c) => c.name));
  const pending = [...new Map(set.map((c) => [c.name, c])).values()].sort(
    (a, b) => (index.get(a.name) ?? Infinity) - (index.get(b.name) ?? Infinity),
  );
  const byName = new Map(registry.map((c) => [c.name, c]));
  const closure = (name: string, acc = new Set<string>()): Set<string> => {
    for (const d of byName.get(name)?.dependsOn ?? []) {
      if (!acc.has(d)) closure(d, acc.add(d));
    }
    return acc;
  };
  const done = new Set<string>();
  const out: ComponentDefinition[] = [];
  while (pending.length > 0) {
    const i = pending.findIndex((c) =>
      [...closure(c.name)].every((d) => done.has(d) || !members.has(d)),
    );
    // Unreachable after assertAcyclic; kept so a broken invariant cannot loop forever.
    if (i < 0) throw new Error(`component dependency cycle among ${pending.map((c) => c.name)}`);
    const [next] = pending.splice(i, 1);
    done.add(next!.name);
    out.push(next!);
  }
  return out;
}

function assertAcyclic(registry: readonly ComponentDefinition[]): void {
  const byName = new Map(registry.map((c) => [c.name, c]));
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') {
      throw new Error(
        `component dependency cycle: ${[...path.slice(path.indexOf(name)), name].join(' -> ')}`,
      );
    }
    state.set(name, 'visiting');
    for (const d of byName.get(name)?.dependsOn ?? []) visit(d, [...path, name]);
    state.set(name, 'done');
  };
  for (const c of registry) visit(c.name, []);
}

/**
 * Dependencies of members of `set` that are not in `set`: `[{ component, dependency }]`. The
 * caller checks whether those are installed on the cluster (apply.ts `checkDependencies`).
 */
export function missingDependencies(
  set: readonly ConfiguredComponent[],
): { component: string; dependency: string }[] {
  const names = new Set(set.map((c) => c.def.name));
  return set.flatMap((c) =>
    c.def.dependsOn
      .filter((d) => !names.has(d))
      .map((d) => ({ component: c.def.name, dependency: d })),
  );
}
