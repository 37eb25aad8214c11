/**
 * JSON Schema (draft 2020-12) of the lokocfg language, generated from the same specs that drive
 * validation. It describes HCL's JSON form of a configuration: a block is an object keyed by its
 * labels, e.g. `{"cluster": {"equinixmetal": {"cluster_name": "demo", "worker_pool": {"web": {...}}}}}`.
 * Cross-field rules (reservations vs count, metro vs facility, label lengths) are described in the
 * descriptions only.
 */
import {
  CLUSTER_SPEC,
  COMPONENT_SPEC,
  TOP_LEVEL_BLOCKS,
  TOP_LEVEL_UNSUPPORTED,
  VARIABLE_SPEC,
  type AttrSpec,
  type BlockSpec,
  type LabelSpec,
  type ValueSpec,
} from './spec.js';

type Schema = Record<string, unknown>;

function valueSchema(v: ValueSpec): Schema {
  switch (v.type) {
    case 'string': {
      const s: Schema = { type: 'string' };
      if (v.enum) s.enum = [...v.enum];
      if (v.pattern) s.pattern = v.pattern;
      if (v.maxLength !== undefined) s.maxLength = v.maxLength;
      return s;
    }
    case 'number': {
      const s: Schema = { type: v.integer ? 'integer' : 'number' };
      if (v.enum) s.enum = [...v.enum];
      if (v.minimum !== undefined) s.minimum = v.minimum;
      return s;
    }
    case 'bool':
      return { type: 'boolean' };
    case 'list':
      return { type: 'array', items: valueSchema(v.items) };
    case 'map': {
      const s: Schema = { type: 'object', additionalProperties: valueSchema(v.values) };
      if (v.keys) s.propertyNames = { pattern: v.keys.pattern };
      return s;
    }
    case 'any':
      return {};
    case 'type-expression':
      return { type: 'string' };
  }
}

function attrSchema(a: AttrSpec): Schema {
  const s: Schema = { description: a.description, ...valueSchema(a.value) };
  if (a.default !== undefined) s.default = a.default;
  if (a.deprecated) {
    s.deprecated = true;
    s.description = `${a.description} ${a.deprecated}`;
  }
  return s;
}

function labelSchema(l: LabelSpec): Schema {
  const s: Schema = {};
  if (l.enum) s.enum = [...l.enum];
  if (l.pattern) s.pattern = l.pattern;
  if (l.maxLength !== undefined) s.maxLength = l.maxLength;
  return s;
}

function bodySchema(b: BlockSpec, refOf: (nested: BlockSpec) => string = (n) => n.type): Schema {
  if (b.freeform) return { type: 'object', description: b.description };
  const properties: Record<string, unknown> = {};
  for (const a of b.attributes) properties[a.name] = attrSchema(a);
  for (const nested of b.blocks) properties[nested.type] = blockSchema(nested, refOf(nested));
  for (const [name, why] of Object.entries(b.unsupported ?? {})) {
    properties[name] = { description: `Not supported by loko: ${why}`, not: {} };
  }
  const s: Schema = {
    type: 'object',
    description: b.description,
    properties,
    additionalProperties: false,
  };
  const required = b.attributes.filter((a) => a.required).map((a) => a.name);
  if (required.length) s.required = required;
  if (b.requireOneOf) s.anyOf = b.requireOneOf.map((n) => ({ required: [n] }));
  return s;
}

/** A labelled block in JSON form: an object keyed by the label (one label level per label). */
function blockSchema(b: BlockSpec, ref = b.type): Schema {
  let s: Schema = { $ref: `#/$defs/${ref}` };
  for (const label of [...b.labels].reverse()) {
    const names = labelSchema(label);
    s = {
      type: 'object',
      description: `${b.description} Keyed by ${label.description}`,
      ...(Object.keys(names).length ? { propertyNames: names } : {}),
      additionalProperties: s,
      ...(b.repeatable ? {} : { maxProperties: 1 }),
    };
  }
  return s;
}

/**
 * `component` keyed by the known component names, each body by its spec (`$defs` entries
 * `component.<name>`, nested blocks `component.<name>.<type>` so they cannot collide with the
 * cluster's).
 */
function componentsSchema(
  specs: ReadonlyMap<string, BlockSpec>,
  defs: Record<string, unknown>,
): Schema {
  const properties: Record<string, unknown> = {};
  const addDefs = (b: BlockSpec, ref: string): void => {
    defs[ref] = bodySchema(b, (nested) => `${ref}.${nested.type}`);
    for (const nested of b.blocks) addDefs(nested, `${ref}.${nested.type}`);
  };
  for (const [name, spec] of specs) {
    addDefs(spec, `component.${name}`);
    properties[name] = { $ref: `#/$defs/component.${name}` };
  }
  return {
    type: 'object',
    description: `${COMPONENT_SPEC.description} Keyed by the component name: ${[...specs.keys()].join(', ')}.`,
    properties,
    additionalProperties: false,
  };
}

/**
 * The JSON Schema of a lokocfg configuration (HCL JSON form), generated from the loader's
 * declarative specs. With `componentSpecs` (the component registry's specs, by name), component
 * bodies are described too; without, they are free-form objects. Written to
 * `schema/lokocfg.schema.json` by `npm run schema` (with every registered component).
 */
export function configJsonSchema(componentSpecs?: ReadonlyMap<string, BlockSpec>): object {
  const properties: Record<string, unknown> = {};
  for (const b of TOP_LEVEL_BLOCKS) properties[b.type] = blockSchema(b);
  for (const [name, why] of Object.entries(TOP_LEVEL_UNSUPPORTED)) {
    properties[name] = { description: `Not supported by loko: ${why}`, not: {} };
  }
  const defs: Record<string, unknown> = {};
  const addDefs = (b: BlockSpec): void => {
    defs[b.type] = bodySchema(b);
    b.blocks.forEach(addDefs);
  };
  [CLUSTER_SPEC, VARIABLE_SPEC, COMPONENT_SPEC].forEach(addDefs);
  if (componentSpecs && componentSpecs.size > 0) {
    properties.component = componentsSchema(componentSpecs, defs);
    delete defs.component;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'loko configuration (*.lokocfg)',
    description:
      "A loko configuration in HCL's JSON form: each block is an object keyed by its labels. Generated from src/config/spec.ts and the component registry (src/components/registry.ts) by `npm run schema`; do not edit.",
    type: 'object',
    properties,
    additionalProperties: false,
    $defs: defs,
  };
}
