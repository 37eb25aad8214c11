/**
 * Test-only component definitions: small but complete (a spec with attributes and a nested
 * block, a decode with a cross-field rule, a render producing a Namespace, ConfigMap and Secret).
 */
import type { DecodedBody } from '../../../../src/config/decode.js';
import type { DiagnosticSink } from '../../../../src/config/diagnostics.js';
import type { BlockSpec } from '../../../../src/config/spec.js';
import type { SourceRange } from '../../../../src/config/types.js';
import type { KubeObject } from '../../../../src/kube/objects.js';
import type { ComponentContext, ComponentDefinition } from '../../../../src/components/types.js';

/** Config of the fake component. */
export interface FakeConfig {
  replicas: number;
  greeting: string;
  pools: { name: string; addresses: string[] }[];
}

/** The fake component's block spec: `replicas`, `greeting`, `pool "<name>" { addresses }`. */
export const FAKE_SPEC: BlockSpec = {
  type: 'component',
  description: 'A test component.',
  labels: [{ name: 'name', description: 'the component name.' }],
  repeatable: true,
  attributes: [
    {
      name: 'replicas',
      description: 'Replicas.',
      value: { type: 'number', integer: true, minimum: 0 },
      default: 1,
    },
    { name: 'greeting', description: 'A greeting.', value: { type: 'string' }, default: 'hi' },
  ],
  blocks: [
    {
      type: 'pool',
      description: 'An address pool.',
      labels: [{ name: 'name', description: 'the pool name.' }],
      repeatable: true,
      attributes: [
        {
          name: 'addresses',
          description: 'CIDRs.',
          value: { type: 'list', items: { type: 'string' } },
          required: true,
        },
      ],
      blocks: [],
    },
  ],
};

/** Options of {@link fakeComponent}. */
export interface FakeOptions {
  name: string;
  namespace?: string;
  bootstrap?: boolean;
  dependsOn?: string[];
  render?: (config: FakeConfig, ctx: ComponentContext) => KubeObject[];
  extra?: Partial<ComponentDefinition<FakeConfig>>;
}

/** A fake component `name`; its decode rejects `replicas > 5` at the attribute's range. */
export function fakeComponent(o: FakeOptions): ComponentDefinition<FakeConfig> {
  const namespace = o.namespace ?? `ns-${o.name}`;
  return {
    name: o.name,
    description: `the ${o.name} test component`,
    namespace,
    bootstrap: o.bootstrap ?? false,
    dependsOn: o.dependsOn ?? [],
    spec: FAKE_SPEC,
    decode(body: DecodedBody, sink: DiagnosticSink, where: SourceRange | undefined): FakeConfig {
      const replicas = body.attrs.get('replicas')!;
      const value = (replicas.value as number | undefined) ?? 1;
      if (value > 5)
        sink.error('Too many replicas', 'At most 5.', replicas.attr?.expr.range ?? where);
      return {
        replicas: value,
        greeting: (body.attrs.get('greeting')!.value as string | undefined) ?? 'hi',
        pools: (body.nested?.get('pool') ?? []).map((p) => ({
          name: p.labels[0]!,
          addresses: (p.body.attrs.get('addresses')!.value as string[] | undefined) ?? [],
        })),
      };
    },
    upstream: [],
    render:
      o.render ??
      ((config, ctx) => [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${o.name}-config`, namespace },
          data: { greeting: config.greeting, cluster: ctx.clusterName ?? '<none>' },
        },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `${o.name}-secret`, namespace },
          stringData: { token: ctx.metalApiKey ?? '<placeholder>' },
        },
      ]),
    ...o.extra,
  };
}
