import { describe, expect, it } from 'vitest';
import {
  componentNames,
  componentSpecs,
  findComponent,
  unknownComponentError,
  COMPONENTS,
} from '../../../../src/components/registry.js';
import {
  ComponentConfigError,
  dependencyOrder,
  missingDependencies,
  resolveComponents,
} from '../../../../src/components/resolve.js';
import type { ComponentDefinition } from '../../../../src/components/types.js';
import type { Diagnostic } from '../../../../src/config/types.js';
import { loadFiles } from '../../config/helpers.js';
import { fakeComponent } from './fake.js';

const cni = fakeComponent({ name: 'cni', bootstrap: true });
const ccm = fakeComponent({ name: 'ccm', bootstrap: true });
const lb = fakeComponent({ name: 'lb', dependsOn: ['cni', 'ccm'] });
const dash = fakeComponent({ name: 'dash', dependsOn: ['lb'] });
const extra = fakeComponent({ name: 'extra' });
// Registry order deliberately puts dependants first, so the order must come from dependsOn.
const REGISTRY: readonly ComponentDefinition[] = [
  dash,
  lb,
  extra,
  ccm,
  cni,
] as ComponentDefinition[];
const specs = componentSpecs(REGISTRY);

describe('registry', () => {
  it('finds by name, lists names in registry order, maps specs', () => {
    expect(componentNames(REGISTRY)).toEqual(['dash', 'lb', 'extra', 'ccm', 'cni']);
    expect(findComponent('lb', REGISTRY)).toBe(lb);
    expect(findComponent('nope', REGISTRY)).toBeUndefined();
    expect([...specs.keys()]).toEqual(componentNames(REGISTRY));
  });

  it('unknown names suggest the closest and list every valid name', () => {
    const e = unknownComponentError('cnii', REGISTRY);
    expect(e.message).toBe('unknown component "cnii"');
    expect(e.hint).toContain('Did you mean "cni"?');
    expect(e.hint).toContain('"dash", "lb", "extra", "ccm" and "cni"');
    expect(unknownComponentError('zzzzzz', REGISTRY).hint).not.toContain('Did you mean');
  });

  it('the real registry has unique names and acyclic, known dependencies', () => {
    const names = componentNames();
    expect(new Set(names).size).toBe(names.length);
    expect(() => dependencyOrder(COMPONENTS)).not.toThrow();
  });
});

describe('dependencyOrder', () => {
  it('puts dependencies first, ties in registry order', () => {
    expect(
      dependencyOrder([dash, lb, ccm, cni, extra] as ComponentDefinition[], REGISTRY).map(
        (c) => c.name,
      ),
    ).toEqual(['extra', 'ccm', 'cni', 'lb', 'dash']);
  });

  it('ignores dependencies outside the set for ordering', () => {
    expect(
      dependencyOrder([dash, extra] as ComponentDefinition[], REGISTRY).map((c) => c.name),
    ).toEqual(['dash', 'extra']);
  });

  it('a cycle is a programming error naming it', () => {
    const a = fakeComponent({ name: 'a', dependsOn: ['b'] });
    const b = fakeComponent({ name: 'b', dependsOn: ['a'] });
    const reg = [a, b] as ComponentDefinition[];
    expect(() => dependencyOrder(reg, reg)).toThrow(/cycle: a -> b -> a/);
    const c = fakeComponent({ name: 'c', dependsOn: ['ghost'] });
    expect(() =>
      dependencyOrder([c] as ComponentDefinition[], [c] as ComponentDefinition[]),
    ).toThrow(/depends on unknown "ghost"/);
  });
});

describe('resolveComponents', () => {
  it('without names: configured + bootstrap, in dependency order, decoded', async () => {
    const r = await loadFiles(
      {
        'c.lokocfg':
          'component "lb" {\n  replicas = 3\n  pool "a" {\n    addresses = ["10.0.0.0/24"]\n  }\n}\n',
      },
      { componentSpecs: specs },
    );
    expect(r.diagnostics).toEqual([]);
    const set = resolveComponents(r, { includeBootstrap: true, registry: REGISTRY });
    expect(set.map((c) => [c.def.name, c.configured])).toEqual([
      ['ccm', false],
      ['cni', false],
      ['lb', true],
    ]);
    expect(set[2]!.config).toEqual({
      replicas: 3,
      greeting: 'hi',
      pools: [{ name: 'a', addresses: ['10.0.0.0/24'] }],
    });
    expect(set[2]!.where!.start).toEqual({ line: 1, column: 1 });
    expect(set[0]!.config).toEqual({ replicas: 1, greeting: 'hi', pools: [] });
    expect(
      resolveComponents(r, { includeBootstrap: false, registry: REGISTRY }).map((c) => c.def.name),
    ).toEqual(['lb']);
  });

  it('with names: exactly those, deduplicated, ordered; unknown names list the valid ones', async () => {
    const r = await loadFiles({ 'c.lokocfg': '' }, { componentSpecs: specs });
    const set = resolveComponents(r, {
      names: ['dash', 'cni', 'dash'],
      includeBootstrap: true,
      registry: REGISTRY,
    });
    expect(set.map((c) => c.def.name)).toEqual(['cni', 'dash']);
    expect(set.every((c) => !c.configured)).toBe(true);
    expect(missingDependencies(set)).toEqual([{ component: 'dash', dependency: 'lb' }]);
    expect(() =>
      resolveComponents(r, { names: ['lbb'], includeBootstrap: false, registry: REGISTRY }),
    ).toThrow(
      expect.objectContaining({
        message: 'unknown component "lbb"',
        hint: expect.stringContaining('Did you mean "lb"?'),
      }),
    );
  });

  it('turns decode errors into a ComponentConfigError with file:line, and passes warnings on', async () => {
    const r = await loadFiles(
      { 'c.lokocfg': 'component "lb" {\n  replicas = 9\n}\n' },
      { componentSpecs: specs },
    );
    expect(r.diagnostics).toEqual([]);
    let err: unknown;
    try {
      resolveComponents(r, { includeBootstrap: false, registry: REGISTRY });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ComponentConfigError);
    const d = (err as ComponentConfigError).diagnostics[0]!;
    expect(d.summary).toBe('Too many replicas');
    expect(d.range!.start).toEqual({ line: 2, column: 14 });

    const warn = fakeComponent({
      name: 'lb',
      extra: {
        decode: (_b, sink, where) => {
          sink.warning('Old setting', undefined, where);
          return {} as never;
        },
      },
    });
    const warnings: Diagnostic[] = [];
    resolveComponents(r, {
      includeBootstrap: false,
      registry: [warn] as ComponentDefinition[],
      warnings,
    });
    expect(warnings.map((w) => w.summary)).toEqual(['Old setting']);
  });

  it('a body decoded without componentSpecs is a programming error, not a silent default', async () => {
    const r = await loadFiles({ 'c.lokocfg': 'component "lb" {}\n' });
    expect(() => resolveComponents(r, { includeBootstrap: false, registry: REGISTRY })).toThrow(
      /componentSpecs/,
    );
  });
});

describe('resolveComponents: a named component without a block', () => {
  it('is refused when its spec has required attributes, naming them and the block to add', async () => {
    const needy = fakeComponent({
      name: 'needy',
      extra: {
        spec: {
          ...fakeComponent({ name: 'x' }).spec,
          attributes: [
            {
              name: 'pools',
              description: 'Pools.',
              value: { type: 'map', values: { type: 'string' } },
              required: true,
            },
          ],
        },
      },
    });
    const reg = [needy] as ComponentDefinition[];
    expect(() =>
      resolveComponents(
        { components: new Map() },
        { names: ['needy'], includeBootstrap: false, registry: reg },
      ),
    ).toThrow(
      expect.objectContaining({
        message: 'component "needy" has no block in the configuration, and it needs pools',
        hint: expect.stringContaining('component "needy" { pools = ... }'),
      }),
    );
  });
});
