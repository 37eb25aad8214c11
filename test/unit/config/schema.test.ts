import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { CLUSTER_SPEC, WORKER_POOL_SPEC, configJsonSchema } from '../../../src/config/index.js';
import { componentSpecs } from '../../../src/components/registry.js';
import { PROJECT } from './helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function validator(): (data: unknown) => boolean {
  // strictRequired would flag `anyOf: [{required: ["metro"]}, ...]`, which is valid JSON Schema.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  return ajv.compile(configJsonSchema());
}

/** A config in HCL's JSON form. */
function config(clusterBody: Record<string, unknown>): unknown {
  return {
    variable: { metro: { type: 'string', default: 'sv' } },
    cluster: {
      equinixmetal: {
        cluster_name: 'demo',
        project_id: PROJECT,
        metro: 'sv',
        asset_dir: 'assets',
        ...clusterBody,
      },
    },
    component: { metallb: { anything: [1, 2] } },
  };
}

describe('configJsonSchema', () => {
  it('matches the committed schema/lokocfg.schema.json', () => {
    const file = path.join(ROOT, 'schema', 'lokocfg.schema.json');
    const committed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    expect(
      committed,
      'schema/lokocfg.schema.json is out of date: run `npm run schema` (after `npm run build`) and commit it',
    ).toEqual(configJsonSchema(componentSpecs()));
  });

  it('is a valid draft 2020-12 schema in strict mode', () => {
    expect(() => validator()).not.toThrow();
  });

  it('is generated from the specs: every attribute with its description and default', () => {
    const s = configJsonSchema() as {
      $defs: Record<
        string,
        { properties: Record<string, Record<string, unknown>>; required?: string[] }
      >;
    };
    for (const a of CLUSTER_SPEC.attributes) {
      expect(s.$defs.cluster!.properties[a.name]!.description).toContain(a.description);
      if (a.default !== undefined)
        expect(s.$defs.cluster!.properties[a.name]!.default).toEqual(a.default);
    }
    for (const a of WORKER_POOL_SPEC.attributes)
      expect(s.$defs.worker_pool!.properties[a.name]).toBeDefined();
    expect(s.$defs.cluster!.required).toEqual(['cluster_name', 'project_id', 'asset_dir']);
    expect(s.$defs.worker_pool!.required).toEqual(['count']);
    expect(s.$defs.cluster!.properties.facility!.deprecated).toBe(true);
  });

  it('accepts a valid config and rejects spec violations', () => {
    const validate = validator();
    const good = config({
      controller_count: 3,
      ssh_pubkeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ1q2w3e4r5t6y7u8i9o0p me@x'],
      tags: { team: 'a' },
      reservation_ids: { 'controller-0': PROJECT },
      worker_pool: {
        web: {
          count: 2,
          labels: { 'example.com/role': 'web' },
          taints: { dedicated: 'web:NoSchedule' },
          reservation_ids: { 'worker-1': PROJECT },
        },
      },
    });
    expect(validate(good)).toBe(true);
    const bad = [
      { controller_count: 2 },
      { cluster_name: 'Bad_Name' },
      { billing_cycle: 'weekly' },
      { auth_token: 'x' },
      { unknown: 1 },
      { reservation_ids: { 'worker-0': PROJECT } },
      { reservation_ids: { 'controller-0': 'next-available' } },
      { worker_pool: { web: { count: -1 } } },
      { worker_pool: { web: { count: 1, taints: { a: 'b:Never' } } } },
      { worker_pool: { controller_: { node_type: 'x' } } },
    ];
    for (const b of bad) expect(validate(config(b)), JSON.stringify(b)).toBe(false);
    const noMetro = config({});
    delete (noMetro as { cluster: { equinixmetal: Record<string, unknown> } }).cluster.equinixmetal
      .metro;
    expect(validate(noMetro)).toBe(false);
  });
});

describe('configJsonSchema with the component registry', () => {
  const schema = (): object => configJsonSchema(componentSpecs());
  it('is valid in strict mode and describes every registered component body', () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
    expect(() => ajv.compile(schema())).not.toThrow();
    const s = schema() as {
      properties: { component: { properties: Record<string, unknown> } };
      $defs: Record<string, { properties?: Record<string, unknown> }>;
    };
    for (const [name, spec] of componentSpecs()) {
      expect(s.properties.component.properties[name]).toEqual({
        $ref: `#/$defs/component.${name}`,
      });
      for (const a of spec.attributes)
        expect(s.$defs[`component.${name}`]!.properties![a.name]).toBeDefined();
    }
  });

  it('rejects unknown component names and unknown attributes in a component body', () => {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
    const validate = ajv.compile(schema());
    const [name] = [...componentSpecs().keys()];
    expect(validate({ component: { [name!]: {} } })).toBe(true);
    expect(validate({ component: { [name!]: { no_such_setting: 1 } } })).toBe(false);
    expect(validate({ component: { 'no-such-component': {} } })).toBe(false);
  });
});

describe('tags description', () => {
  it('names the reserved keys as the rule checks them: "loko" and "loko:*"', () => {
    for (const spec of [CLUSTER_SPEC, WORKER_POOL_SPEC]) {
      const tags = spec.attributes.find((a) => a.name === 'tags')!;
      expect(tags.description).toContain(
        'The key "loko" and keys starting with "loko:" are reserved',
      );
    }
  });
});
