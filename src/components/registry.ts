/**
 * The component registry: every component loko knows, in one explicit list (no discovery, no
 * plugins). The order is the display order of `loko component list` and the tie-break of the
 * dependency order (see resolve.ts).
 */
import { quoteList, suggest } from '../config/diagnostics.js';
import type { BlockSpec } from '../config/spec.js';
import { LokoError } from '../util/errors.js';
import { cloudProviderEquinixMetal } from './cloud-provider-equinix-metal/index.js';
import { flannel } from './flannel/index.js';
import { metallb } from './metallb/index.js';
import type { ComponentDefinition } from './types.js';

/**
 * Every component loko knows, in display order: the bootstrap ones first (the cloud controller
 * manager initialises nodes, the CNI makes them Ready), then the optional ones.
 */
export const COMPONENTS: readonly ComponentDefinition[] = [
  cloudProviderEquinixMetal,
  flannel,
  metallb,
] as ComponentDefinition[];

/** The definition named `name`, or undefined. */
export function findComponent(
  name: string,
  registry: readonly ComponentDefinition[] = COMPONENTS,
): ComponentDefinition | undefined {
  return registry.find((c) => c.name === name);
}

/** Names of the registered components, in display order. */
export function componentNames(registry: readonly ComponentDefinition[] = COMPONENTS): string[] {
  return registry.map((c) => c.name);
}

/**
 * Body spec per component name, for `loadConfig({ componentSpecs })` (src/config cannot import
 * this module) and the JSON Schema generator.
 */
export function componentSpecs(
  registry: readonly ComponentDefinition[] = COMPONENTS,
): ReadonlyMap<string, BlockSpec> {
  return new Map(registry.map((c) => [c.name, c.spec]));
}

/**
 * The error for a component name that is not registered: names it, suggests the closest valid
 * name, and lists all of them. `source` says where the name came from (e.g. `argument`), for the
 * message.
 */
export function unknownComponentError(
  name: string,
  registry: readonly ComponentDefinition[] = COMPONENTS,
  source = '',
): LokoError {
  const names = componentNames(registry);
  const near = suggest(name, names);
  return new LokoError(`unknown component "${name}"${source ? ` (${source})` : ''}`, {
    hint: `${near ? `Did you mean "${near}"? ` : ''}${
      names.length ? `Valid components: ${quoteList(names)}.` : 'No components are registered.'
    } \`loko component list\` describes them.`,
  });
}

/** The definition named `name`; throws {@link unknownComponentError} when there is none. */
export function requireComponent(
  name: string,
  registry: readonly ComponentDefinition[] = COMPONENTS,
): ComponentDefinition {
  const def = findComponent(name, registry);
  if (!def) throw unknownComponentError(name, registry);
  return def;
}
