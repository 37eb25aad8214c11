/**
 * The `component "metallb" { ... }` block: spec and typed config, modelled on lokoctl's metallb
 * component (lokomotive.md §3): `address_pools` (required), node selectors and tolerations for
 * the controller and the speakers. `service_monitor` is not offered (no Prometheus operator here).
 */
import { elementExpr, elementKeyExpr } from '../../config/ast.js';
import type { DecodedBody, DecodedBlock } from '../../config/decode.js';
import { formatPosition, type DiagnosticSink } from '../../config/diagnostics.js';
import type { BlockSpec } from '../../config/spec.js';
import type { SourceRange } from '../../config/types.js';
import { networkOf, overlaps, parseCidr, type Cidr } from './cidr.js';

/** One address pool: an `IPAddressPool` named after the map key. */
export interface AddressPool {
  name: string;
  /** CIDRs as written (validated, host bits clear). */
  addresses: string[];
}

/** A Kubernetes toleration as the pod spec takes it. */
export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

/** The typed config of the metallb component. */
export interface MetallbConfig {
  /** Pools sorted by name (render is deterministic whatever the HCL order). */
  addressPools: AddressPool[];
  controllerNodeSelectors: Record<string, string>;
  speakerNodeSelectors: Record<string, string>;
  controllerTolerations: Toleration[];
  speakerTolerations: Toleration[];
}

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** Same shape as the cluster block's label keys (src/config/spec.ts). */
const LABEL_KEY =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$';
const LABEL_KEY_FORMAT = 'a Kubernetes label key: [prefix/]name, e.g. "example.com/role" or "tier"';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';

const TOLERATION_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

const nodeSelectors = (who: string): BlockSpec['attributes'][number] => ({
  name: `${who}_node_selectors`,
  description: `Node labels the MetalLB ${who} must match (merged with upstream's kubernetes.io/os = "linux").`,
  value: {
    type: 'map',
    values: {
      type: 'string',
      pattern: LABEL_VALUE,
      format:
        'a label value: letters, digits, "-", "_", "." (63 at most), starting and ending alphanumeric',
      maxLength: 63,
    },
    keys: { pattern: LABEL_KEY, format: LABEL_KEY_FORMAT },
  },
  default: {},
});

const toleration = (who: string): BlockSpec => ({
  type: `${who}_toleration`,
  description: `A toleration added to the MetalLB ${who} pods (after upstream's); repeatable.`,
  labels: [],
  repeatable: true,
  attributes: [
    {
      name: 'key',
      description: 'Taint key; empty with operator "Exists" tolerates every taint.',
      value: { type: 'string', pattern: `(^$)|${LABEL_KEY}`, format: LABEL_KEY_FORMAT },
    },
    {
      name: 'operator',
      description: '"Equal" (key and value must match) or "Exists" (key only).',
      value: { type: 'string', enum: ['Equal', 'Exists'] },
      default: 'Equal',
    },
    {
      name: 'value',
      description: 'Taint value (operator "Equal" only).',
      value: { type: 'string', pattern: LABEL_VALUE, format: 'a label value', maxLength: 63 },
    },
    {
      name: 'effect',
      description: 'Taint effect to tolerate; empty tolerates every effect.',
      value: { type: 'string', enum: ['', ...TOLERATION_EFFECTS] },
    },
    {
      name: 'toleration_seconds',
      description:
        'How long a NoExecute taint is tolerated before eviction (effect "NoExecute" only).',
      value: { type: 'number', integer: true, minimum: 0 },
    },
  ],
  blocks: [],
});

/** The block spec (see {@link MetallbConfig}). */
export const METALLB_SPEC: BlockSpec = {
  type: 'component',
  description:
    'MetalLB v0.16.2 (native BGP speaker) for Services of type LoadBalancer: the upstream install, one IPAddressPool per address pool and a BGPAdvertisement. BGP peers come from the cloud controller manager (one per BGP-enabled node).',
  labels: [{ name: 'name', description: 'the component name.' }],
  repeatable: false,
  attributes: [
    {
      name: 'address_pools',
      description:
        'Address pools by name: each a list of CIDRs (IPv4 or IPv6, host bits clear) MetalLB assigns to LoadBalancer Services and announces over BGP, e.g. { default = ["147.75.40.16/28"] }. Typically Equinix Metal global or public IPv4 reservations. Pools must not overlap.',
      value: {
        type: 'map',
        values: { type: 'list', items: { type: 'string' } },
        keys: {
          pattern: DNS_LABEL,
          format:
            'a DNS label (it names an IPAddressPool): lowercase letters, digits and "-", starting and ending with a letter or digit',
        },
      },
      required: true,
    },
    nodeSelectors('controller'),
    nodeSelectors('speaker'),
  ],
  blocks: [toleration('controller'), toleration('speaker')],
};

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  }
  return out;
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Turns a spec-validated body into {@link MetallbConfig}. Reports (with the element's file:line):
 * an empty `address_pools` or pool, an entry that is not a CIDR, host bits set (with the aligned
 * prefix as the fix), pools or entries that overlap (MetalLB's webhook would refuse them), and
 * toleration fields that contradict each other.
 */
export function decodeMetallb(
  body: DecodedBody,
  sink: DiagnosticSink,
  _where: SourceRange | undefined,
): MetallbConfig {
  const cfg: MetallbConfig = {
    addressPools: [],
    controllerNodeSelectors: sortedRecord(
      stringRecord(body.attrs.get('controller_node_selectors')?.value),
    ),
    speakerNodeSelectors: sortedRecord(
      stringRecord(body.attrs.get('speaker_node_selectors')?.value),
    ),
    controllerTolerations: decodeTolerations(body.nested?.get('controller_toleration') ?? [], sink),
    speakerTolerations: decodeTolerations(body.nested?.get('speaker_toleration') ?? [], sink),
  };

  const pools = body.attrs.get('address_pools');
  if (!pools?.attr) return cfg; // "missing required attribute" is reported by the spec decoder.
  if (pools.value === undefined || !pools.valid) return cfg;
  const expr = pools.attr.expr;
  const value = pools.value as Record<string, unknown>;
  const names = Object.keys(value).sort();
  if (names.length === 0) {
    sink.error(
      'Invalid value for "address_pools"',
      'address_pools needs at least one pool, e.g. address_pools = { default = ["147.75.40.16/28"] }.',
      expr.range,
    );
    return cfg;
  }
  const seen: { cidr: Cidr; text: string; pool: string; range: SourceRange }[] = [];
  for (const name of names) {
    const list = value[name];
    const listExpr = elementExpr(expr, name);
    if (!Array.isArray(list) || list.length === 0) {
      sink.error(
        `Empty address pool "${name}"`,
        `address_pools.${name} needs at least one CIDR, e.g. ["147.75.40.16/28"].`,
        (Array.isArray(list) ? listExpr : elementKeyExpr(expr, name)).range,
      );
      continue;
    }
    const addresses: string[] = [];
    list.forEach((item, i) => {
      const range = elementExpr(listExpr, i).range;
      const text = String(item);
      const cidr = parseCidr(text);
      if (!cidr) {
        sink.error(
          `Invalid CIDR "${text}" in address pool "${name}"`,
          'Each entry must be an IPv4 or IPv6 prefix such as "147.75.40.16/28" or "2604:1380::/64".',
          range,
        );
        return;
      }
      if (cidr.address !== cidr.first) {
        sink.error(
          `CIDR "${text}" in address pool "${name}" has host bits set`,
          `Write the prefix's network address: "${networkOf(cidr)}".`,
          range,
        );
        return;
      }
      const clash = seen.find((s) => overlaps(s.cidr, cidr));
      if (clash) {
        sink.error(
          `CIDR "${text}" in address pool "${name}" overlaps "${clash.text}" of pool "${clash.pool}"`,
          `"${clash.text}" is at ${formatPosition(clash.range)}. MetalLB refuses overlapping pools: give each address to one pool.`,
          range,
        );
        return;
      }
      seen.push({ cidr, text, pool: name, range });
      addresses.push(text);
    });
    cfg.addressPools.push({ name, addresses });
  }
  return cfg;
}

function decodeTolerations(blocks: readonly DecodedBlock[], sink: DiagnosticSink): Toleration[] {
  const out: Toleration[] = [];
  for (const b of blocks) {
    const get = (n: string) => b.body.attrs.get(n)?.value;
    const range = (n: string) => b.body.attrs.get(n)?.attr?.nameRange ?? b.block.headerRange;
    const key = get('key') as string | undefined;
    const operator = ((get('operator') as string | undefined) ?? 'Equal') as 'Equal' | 'Exists';
    const value = get('value') as string | undefined;
    const effect = get('effect') as Toleration['effect'] | '' | undefined;
    const seconds = get('toleration_seconds') as number | undefined;
    let ok = true;
    if (operator === 'Exists' && value !== undefined && value !== '') {
      sink.error(
        'Invalid toleration',
        'operator "Exists" takes no value; remove value or use operator "Equal".',
        range('value'),
      );
      ok = false;
    }
    if (operator === 'Equal' && (key === undefined || key === '')) {
      sink.error(
        'Invalid toleration',
        'operator "Equal" needs a key; set key, or use operator "Exists" to tolerate every taint.',
        b.block.headerRange,
      );
      ok = false;
    }
    if (seconds !== undefined && effect !== 'NoExecute') {
      sink.error(
        'Invalid toleration',
        'toleration_seconds only applies to effect "NoExecute".',
        range('toleration_seconds'),
      );
      ok = false;
    }
    if (!ok) continue;
    const t: Toleration = {};
    if (key) t.key = key;
    t.operator = operator;
    if (value !== undefined && operator === 'Equal') t.value = value;
    if (effect) t.effect = effect;
    if (seconds !== undefined) t.tolerationSeconds = seconds;
    out.push(t);
  }
  return out;
}
