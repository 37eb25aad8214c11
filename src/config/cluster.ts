/**
 * `cluster "equinixmetal"` blocks -> {@link ClusterConfig}: platform label, spec decoding, the
 * cluster-level rules (metro/facility, asset_dir, tags, reservations) and the worker pools.
 */
import path from 'node:path';
import type { Block, Body } from './ast.js';
import { decodeBody, valueRange, type DecodedAttr, type DecodedBody } from './decode.js';
import { DiagnosticSink, formatPosition, quoteList } from './diagnostics.js';
import type { EvalContext } from './evaluate.js';
import { DEFAULT_KUBERNETES_VERSION, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR } from './defaults.js';
import {
  checkKubernetesVersion,
  checkLabels,
  checkNetworks,
  checkReservationReuse,
  checkReservations,
  parseTaints,
  userTags,
  checkOs,
} from './rules.js';
import { CLUSTER_SPEC, LEGACY_PLATFORM, PLATFORM, WORKER_POOL_SPEC } from './spec.js';
import type {
  BillingCycle,
  ClusterConfig,
  SourceIndex,
  SourceRange,
  WorkerPoolConfig,
} from './types.js';

/** Pool names that would collide with loko's own hostnames (`<cluster>-controller-<i>`). */
const RESERVED_POOL_NAMES = new Set(['controller']);

/** Longest hostname Equinix Metal and Kubernetes node names accept as one DNS label. */
const MAX_HOSTNAME = 63;

/**
 * Decodes and validates all `cluster` blocks (their bodies are merged; duplicates are reported).
 * Fills `sources` with `cluster.*` entries. Returns a config only when this step found no errors.
 */
export function decodeCluster(
  blocks: Block[],
  ctx: EvalContext,
  sources: SourceIndex,
): ClusterConfig | undefined {
  const sink = ctx.sink;
  const errorsBefore = sink.errorCount;
  checkPlatform(blocks, sink);
  const first = blocks[0]!;
  const header = first.headerRange;
  const where = `cluster "${PLATFORM}"`;
  const body: Body = {
    attributes: blocks.flatMap((b) => b.body.attributes),
    blocks: blocks.flatMap((b) => b.body.blocks),
  };
  const d = decodeBody(body, CLUSTER_SPEC, where, header, ctx);
  sources.set('cluster', header);

  const val = <T>(name: string): T | undefined => d.attrs.get(name)!.value as T | undefined;
  const attr = (name: string): DecodedAttr => d.attrs.get(name)!;
  const record = (name: string): void => {
    sources.set(`cluster.${name}`, attr(name).attr?.expr.range ?? header);
  };
  for (const a of CLUSTER_SPEC.attributes) {
    if (a.name !== 'facility' || attr('facility').attr) record(a.name);
  }

  const metro = resolveMetro(attr('metro'), attr('facility'), 'cluster', sink);
  if (metro.range) sources.set('cluster.metro', metro.range);

  const assetDir = resolveAssetDir(attr('asset_dir'), sink);
  const tags = userTags(
    val<Record<string, string>>('tags') ?? {},
    attr('tags').attr,
    where,
    header,
    sink,
  );
  const controllerCount = val<number>('controller_count') ?? 1;
  const reservationIds = checkReservations(
    {
      role: 'controller',
      where,
      countName: 'controller_count',
      count: attr('controller_count').valid ? controllerCount : undefined,
      ids: val<Record<string, string>>('reservation_ids') ?? {},
      idsAttr: attr('reservation_ids').attr,
      dflt: val<string>('reservation_ids_default') ?? '',
      dfltAttr: attr('reservation_ids_default').attr,
      header,
    },
    sink,
  );

  const cluster: ClusterConfig = {
    platform: 'equinixmetal',
    clusterName: val<string>('cluster_name') ?? '',
    projectId: (val<string>('project_id') ?? '').toLowerCase(),
    metro: metro.value ?? '',
    assetDir: assetDir ?? '',
    controllerCount,
    controllerType: val<string>('controller_type') ?? 'c3.small.x86',
    os: val<string>('os') ?? 'ubuntu_24_04',
    sshPubkeys: (val<string[]>('ssh_pubkeys') ?? []).map((k) => k.trim()),
    tags,
    billingCycle: (val<string>('billing_cycle') ?? 'hourly') as BillingCycle,
    reservationIds,
    reservationIdsDefault: (val<string>('reservation_ids_default') ?? '') as '' | 'next-available',
    kubernetesVersion: val<string>('kubernetes_version') ?? DEFAULT_KUBERNETES_VERSION,
    podCidr: val<string>('pod_cidr') ?? DEFAULT_POD_CIDR,
    serviceCidr: val<string>('service_cidr') ?? DEFAULT_SERVICE_CIDR,
    workerPools: [],
  };
  if (attr('kubernetes_version').valid) {
    checkKubernetesVersion(
      cluster.kubernetesVersion,
      DEFAULT_KUBERNETES_VERSION,
      sources.get('cluster.kubernetes_version')!,
      sink,
    );
  }
  if (metro.facility !== undefined) cluster.facility = metro.facility;
  const mirror = val<string>('manifest_mirror');
  if (mirror !== undefined) cluster.manifestMirror = mirror.replace(/\/+$/, '');
  const manifestDir = resolveDir(attr('manifest_dir'), 'manifest_dir', sink);
  if (manifestDir !== undefined) cluster.manifestDir = manifestDir;
  if (attr('os').valid) checkOs(cluster.os, where, sources.get('cluster.os')!, sink);

  const inherited = {
    metro: { value: cluster.metro, range: sources.get('cluster.metro')! },
    os: { value: cluster.os, range: sources.get('cluster.os')! },
  };
  const seen = new Map<string, SourceRange>();
  const reservationUses: { id: string; what: string; range: SourceRange }[] = [];
  addReservationUses(
    reservationUses,
    reservationIds,
    'controller',
    'controller',
    attr('reservation_ids'),
  );
  for (const block of d.blocks.get('worker_pool')!) {
    const name = block.labels[0]!.value;
    const label = block.labels[0]!.range;
    const prev = seen.get(name);
    if (prev) {
      sink.error(
        `Duplicate worker pool "${name}"`,
        `A worker_pool "${name}" is already defined at ${formatPosition(prev)}; pool names must be unique.`,
        label,
      );
      continue;
    }
    seen.set(name, label);
    if (RESERVED_POOL_NAMES.has(name)) {
      sink.error(
        `Worker pool name "${name}" is reserved`,
        `Controllers are named "<cluster>-${name}-<index>", so a pool cannot be called "${name}". Choose another name.`,
        label,
      );
      continue;
    }
    const pool = decodePool(block, ctx, sources, inherited, reservationUses);
    if (pool) {
      checkHostnameLength(cluster.clusterName, pool, label, sink);
      cluster.workerPools.push(pool);
    }
  }
  checkReservationReuse(reservationUses, sink);
  if (attr('pod_cidr').valid && attr('service_cidr').valid) {
    const nodes =
      controllerCount + cluster.workerPools.reduce((n, p) => n + Math.max(0, p.count), 0);
    checkNetworks(
      { name: 'pod_cidr', value: cluster.podCidr, range: sources.get('cluster.pod_cidr')! },
      {
        name: 'service_cidr',
        value: cluster.serviceCidr,
        range: sources.get('cluster.service_cidr')!,
      },
      nodes,
      sink,
    );
  }

  if (d.blocks.get('worker_pool')!.length === 0) {
    sink.warning(
      'No worker pools',
      'The cluster has controllers only. lokoctl required at least one worker_pool; loko allows none, but ordinary workloads need worker nodes: add worker_pool "<name>" { count = 1 }.',
      header,
    );
  }
  return sink.errorCount === errorsBefore ? cluster : undefined;
}

function checkPlatform(blocks: Block[], sink: DiagnosticSink): void {
  for (const b of blocks) {
    const label = b.labels[0];
    if (!label || b.labels.length !== 1) {
      sink.error(
        'Wrong number of labels on "cluster" block',
        `Write cluster "${PLATFORM}" { ... }.`,
        b.headerRange,
      );
      continue;
    }
    if (label.value === LEGACY_PLATFORM) {
      sink.warning(
        `Platform "${LEGACY_PLATFORM}" is deprecated`,
        `Packet is now Equinix Metal: write cluster "${PLATFORM}". The settings are the same.`,
        label.range,
      );
    } else if (label.value !== PLATFORM) {
      sink.error(
        `Unsupported platform "${label.value}"`,
        `loko runs clusters on Equinix Metal only; the valid platform is ${quoteList([PLATFORM])} ("${LEGACY_PLATFORM}" is accepted as a deprecated alias).`,
        label.range,
      );
    }
  }
}

interface Metro {
  value?: string;
  facility?: string;
  range?: SourceRange;
}

/**
 * metro / legacy facility: the facility's first two letters are its metro (sv15 -> sv). When both
 * are set they must agree. The deprecation warning comes from the spec.
 */
function resolveMetro(
  metro: DecodedAttr,
  facility: DecodedAttr,
  where: string,
  sink: DiagnosticSink,
): Metro {
  const m = typeof metro.value === 'string' ? metro.value.toLowerCase() : undefined;
  const f = typeof facility.value === 'string' ? facility.value.toLowerCase() : undefined;
  if (f !== undefined && m !== undefined && f.slice(0, 2) !== m) {
    sink.error(
      `metro "${m}" does not match facility "${f}" in ${where}`,
      `Facility "${f}" is in metro "${f.slice(0, 2)}". Remove the deprecated facility and keep metro.`,
      metro.attr!.expr.range,
    );
    return {};
  }
  if (m !== undefined) {
    const out: Metro = { value: m, range: metro.attr!.expr.range };
    if (f !== undefined) out.facility = f;
    return out;
  }
  if (f !== undefined)
    return { value: f.slice(0, 2), facility: f, range: facility.attr!.expr.range };
  return {};
}

function resolveAssetDir(a: DecodedAttr, sink: DiagnosticSink): string | undefined {
  return resolveDir(a, 'asset_dir', sink);
}

/** A directory attribute: not empty, no unexpanded "~", relative to the declaring file. */
function resolveDir(a: DecodedAttr, name: string, sink: DiagnosticSink): string | undefined {
  if (typeof a.value !== 'string' || !a.attr) return undefined;
  const dir = a.value;
  if (dir.trim() === '') {
    sink.error(`Invalid value for "${name}"`, `${name} cannot be empty.`, a.attr.expr.range);
    return undefined;
  }
  if (dir.startsWith('~')) {
    sink.error(
      `Invalid value for "${name}"`,
      `"${dir}" starts with "~", which is not expanded here; write ${name} = pathexpand("${dir}").`,
      a.attr.expr.range,
    );
    return undefined;
  }
  // Relative to the file that sets it, so the result does not depend on the working directory.
  return path.resolve(path.dirname(a.attr.expr.range.file), dir);
}

function addReservationUses(
  uses: { id: string; what: string; range: SourceRange }[],
  ids: Record<number, string>,
  role: string,
  what: string,
  a: DecodedAttr,
): void {
  if (!a.attr) return;
  for (const [i, id] of Object.entries(ids)) {
    const key = `${role}-${i}`;
    uses.push({ id, what: `${what} ${key}`, range: valueRange(a.attr, key, a.attr.expr.range) });
  }
}

function decodePool(
  block: Block,
  ctx: EvalContext,
  sources: SourceIndex,
  inherited: Record<'metro' | 'os', { value: string; range: SourceRange }>,
  reservationUses: { id: string; what: string; range: SourceRange }[],
): WorkerPoolConfig | undefined {
  const sink = ctx.sink;
  const errorsBefore = sink.errorCount;
  const name = block.labels[0]!.value;
  const where = `worker_pool "${name}"`;
  const header = block.headerRange;
  const d: DecodedBody = decodeBody(block.body, WORKER_POOL_SPEC, where, header, ctx);
  const val = <T>(n: string): T | undefined => d.attrs.get(n)!.value as T | undefined;
  const attr = (n: string): DecodedAttr => d.attrs.get(n)!;
  const key = `cluster.worker_pool.${name}`;
  sources.set(key, header);
  for (const a of WORKER_POOL_SPEC.attributes) {
    const set = attr(a.name).attr?.expr.range;
    if (set) sources.set(`${key}.${a.name}`, set);
    else if (a.name === 'metro' || a.name === 'os')
      sources.set(`${key}.${a.name}`, inherited[a.name].range);
    else if (a.name !== 'facility') sources.set(`${key}.${a.name}`, header);
  }

  const metro = resolveMetro(attr('metro'), attr('facility'), where, sink);
  if (metro.range) sources.set(`${key}.metro`, metro.range);
  const count = val<number>('count') ?? 0;
  const labels = val<Record<string, string>>('labels') ?? {};
  checkLabels(labels, attr('labels').attr, where, header, sink);
  const taints = parseTaints(
    val<Record<string, string>>('taints') ?? {},
    attr('taints').attr,
    where,
    header,
    sink,
  );
  const tags = userTags(
    val<Record<string, string>>('tags') ?? {},
    attr('tags').attr,
    where,
    header,
    sink,
  );
  const reservationIds = checkReservations(
    {
      role: 'worker',
      where,
      countName: 'count',
      count: attr('count').valid && attr('count').attr ? count : undefined,
      ids: val<Record<string, string>>('reservation_ids') ?? {},
      idsAttr: attr('reservation_ids').attr,
      dflt: val<string>('reservation_ids_default') ?? '',
      dfltAttr: attr('reservation_ids_default').attr,
      header,
    },
    sink,
  );
  addReservationUses(reservationUses, reservationIds, 'worker', where, attr('reservation_ids'));

  const pool: WorkerPoolConfig = {
    name,
    count,
    nodeType: val<string>('node_type') ?? 'c3.small.x86',
    metro: metro.value ?? inherited.metro.value,
    os: val<string>('os') ?? inherited.os.value,
    labels: { ...labels },
    taints,
    disableBgp: val<boolean>('disable_bgp') ?? false,
    tags,
    reservationIds,
    reservationIdsDefault: (val<string>('reservation_ids_default') ?? '') as '' | 'next-available',
  };
  if (metro.facility !== undefined) pool.facility = metro.facility;
  // An inherited os is checked (and reported) once, at the cluster.
  if (attr('os').attr && attr('os').valid)
    checkOs(pool.os, where, attr('os').attr!.expr.range, sink);
  if (
    metro.value !== undefined &&
    inherited.metro.value !== '' &&
    metro.value !== inherited.metro.value
  ) {
    sink.warning(
      `${where} is in metro "${metro.value}", the control plane in "${inherited.metro.value}"`,
      'Private traffic between metros needs Backend Transfer enabled on the project.',
      metro.range,
    );
  }
  return sink.errorCount === errorsBefore ? pool : undefined;
}

/** `<cluster>-<pool>-<index>` must stay one DNS label (63 characters). */
function checkHostnameLength(
  cluster: string,
  pool: WorkerPoolConfig,
  label: SourceRange,
  sink: DiagnosticSink,
): void {
  if (cluster === '' || pool.count === 0) return;
  const longest = `${cluster}-${pool.name}-${pool.count - 1}`;
  if (longest.length > MAX_HOSTNAME) {
    sink.error(
      `Worker pool name "${pool.name}" is too long`,
      `Hostnames such as "${longest}" (${longest.length} characters) exceed ${MAX_HOSTNAME}; shorten the pool or cluster name.`,
      label,
    );
  }
}
