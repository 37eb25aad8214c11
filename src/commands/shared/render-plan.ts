/**
 * How a plan looks: text for people (grouped symbols like Terraform's), JSON for scripts.
 */
import type { ChalkInstance } from 'chalk';
import { apiKeyMutationCall } from '../../platforms/equinixmetal/api-key.js';
import { describeMutation, type Mutation } from '../../platforms/equinixmetal/executor.js';
import type { EndpointPlan } from '../../platforms/equinixmetal/endpoint.js';
import type { Action, Plan } from '../../platforms/equinixmetal/plan.js';

const SYMBOL: Record<Action['type'], string> = {
  create: '+',
  update: '~',
  replace: '-/+',
  delete: '-',
  noop: ' ',
};

/** Text lines of a plan. `allowReplace` marks replacements that would be refused. */
export function planLines(p: Plan, c: ChalkInstance, allowReplace: boolean): string[] {
  if (!p.changes) {
    const waiting = p.actions.filter((a) => a.type === 'noop' && a.state !== 'active');
    const lines = [
      `No changes: the ${p.counts.noop} devices of cluster "${p.clusterName}" match the configuration.`,
    ];
    const e = p.endpoint;
    if (e?.reservation && e.heldBy)
      lines.push(`The control-plane Elastic IP ${e.reservation.address} is on ${e.heldBy}.`);
    if (waiting.length > 0)
      lines.push(
        `(${waiting.map((a) => `${a.hostname} is ${'state' in a ? a.state : ''}`).join(', ')})`,
      );
    return lines;
  }
  const paint: Record<Action['type'], (s: string) => string> = {
    create: c.green,
    update: c.yellow,
    replace: c.magenta,
    delete: c.red,
    noop: c.dim,
  };
  const width = Math.max(...p.actions.map((a) => a.hostname.length));
  const lines = [`Plan for cluster "${p.clusterName}":`, ''];
  for (const a of p.actions) {
    if (a.type === 'noop') continue;
    lines.push(
      `  ${paint[a.type](`${SYMBOL[a.type].padStart(3)} ${a.type.padEnd(7)}`)} ${a.hostname.padEnd(width)}  ${describe(a, allowReplace)}`,
    );
  }
  const endpoint = endpointLines(p.endpoint);
  if (endpoint.length > 0) {
    if (lines.length > 2) lines.push('');
    for (const [symbol, text] of endpoint)
      lines.push(`  ${(symbol === '-' ? c.red : c.green)(symbol.padStart(3))} ${text}`);
  }
  lines.push('', summaryLine(p));
  return lines;
}

/** `[symbol, text]` per change of the control-plane Elastic IP, in the order apply makes them. */
function endpointLines(e: EndpointPlan | undefined): Array<[string, string]> {
  if (!e) return [];
  const out: Array<[string, string]> = [];
  if (e.reserve)
    out.push(['+', `reserve the control-plane Elastic IP (public_ipv4 /32 in ${e.metro})`]);
  const address = e.reservation ? ` ${e.reservation.address}` : '';
  if (e.retag) {
    out.push([
      '~',
      `tag the control-plane Elastic IP${address} (tags ${e.retag.tags.join(', ')}; the CCM finds it by the new one)`,
    ]);
  }
  for (const u of e.unassign)
    out.push(['-', `unassign the control-plane Elastic IP${address} from ${u.from}`]);
  if (e.assign) {
    out.push(['+', `assign the control-plane Elastic IP${address} to ${e.assign.hostname}`]);
  }
  return out;
}

/**
 * `Plan: 2 to create, 1 to update, 0 to replace, 1 to delete, 3 unchanged.`, plus the Elastic IP
 * changes when there are any.
 */
export function summaryLine(p: Plan): string {
  const c = p.counts;
  const e = p.endpoint;
  const eip = e
    ? [
        e.reserve && 'reserve',
        e.retag && 'tag',
        e.unassign.length > 0 && 'unassign',
        e.assign && 'assign',
      ].filter(Boolean)
    : [];
  return `Plan: ${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete, ${c.noop} unchanged${
    eip.length > 0 ? `; control-plane Elastic IP: ${eip.join(', ')}` : ''
  }.`;
}

function describe(a: Action, allowReplace: boolean): string {
  switch (a.type) {
    case 'create':
      return `${a.desired.plan}, ${a.desired.metro}, ${a.desired.os} (${role(a.desired.role, a.desired.pool)})`;
    case 'update': {
      const add = a.tagsTo.filter((t) => !a.tagsFrom.includes(t)).map((t) => `+${t}`);
      const del = a.tagsFrom.filter((t) => !a.tagsTo.includes(t)).map((t) => `-${t}`);
      return `tags ${[...add, ...del].join(' ')}`;
    }
    case 'replace': {
      const why =
        a.reason === 'failed'
          ? 'provisioning failed'
          : a.changes.map((ch) => `${ch.field} ${ch.from} -> ${ch.to}`).join(', ');
      return a.requiresAllowReplace && !allowReplace ? `${why} (needs --allow-replace)` : why;
    }
    case 'delete':
      return `${a.detail} (${a.state})`;
    case 'noop':
      return a.state;
  }
}

function role(r: 'controller' | 'worker', pool?: string): string {
  return r === 'controller' ? 'controller' : `worker, pool ${pool}`;
}

/** JSON form of one action: stable field names for scripts. */
export function actionJson(a: Action): Record<string, unknown> {
  const base: Record<string, unknown> = { action: a.type, hostname: a.hostname };
  switch (a.type) {
    case 'create':
      return {
        ...base,
        role: a.desired.role,
        pool: a.desired.pool,
        plan: a.desired.plan,
        metro: a.desired.metro,
        os: a.desired.os,
      };
    case 'update':
      return { ...base, deviceId: a.deviceId, tagsFrom: a.tagsFrom, tagsTo: a.tagsTo };
    case 'replace':
      return {
        ...base,
        deviceId: a.deviceId,
        reason: a.reason,
        changes: a.changes,
        requiresAllowReplace: a.requiresAllowReplace,
        state: a.state,
      };
    case 'delete':
      return { ...base, deviceId: a.deviceId, reason: a.reason, detail: a.detail, state: a.state };
    case 'noop':
      return { ...base, deviceId: a.deviceId, state: a.state };
  }
}

/** JSON form of a plan. */
export function planJson(p: Plan): Record<string, unknown> {
  return {
    cluster: p.clusterName,
    changes: p.changes,
    counts: p.counts,
    actions: p.actions.map(actionJson),
    ...(p.endpoint ? { endpoint: endpointJson(p.endpoint) } : {}),
  };
}

/** JSON form of the control-plane Elastic IP plan. */
export function endpointJson(e: EndpointPlan): Record<string, unknown> {
  return {
    address: e.reservation?.address ?? null,
    reservationId: e.reservation?.id ?? null,
    metro: e.metro,
    reserve: e.reserve,
    unassign: e.unassign,
    assign: e.assign ? { hostname: e.assign.hostname, deviceId: e.assign.deviceId ?? null } : null,
    heldBy: e.heldBy ?? null,
    retag: e.retag ?? null,
  };
}

/** JSON form of one API write: the call and a sentence (no bodies: userdata stays out of logs). */
export function mutationJson(m: Mutation): { call: string; description: string } {
  return { call: mutationCall(m), description: describeMutation(m) };
}

function mutationCall(m: Mutation): string {
  switch (m.kind) {
    case 'create-device':
      return `POST /projects/${m.projectId}/devices`;
    case 'update-device':
      return `PUT /devices/${m.deviceId}`;
    case 'delete-device':
      return `DELETE /devices/${m.deviceId}`;
    case 'delete-ip-reservation':
    case 'unassign-ip':
      return `DELETE /ips/${m.id}`;
    case 'reserve-ip':
      return `POST /projects/${m.projectId}/ips`;
    case 'assign-ip':
      return `POST /devices/${m.deviceId}/ips`;
    case 'tag-ip':
      return `PATCH /ips/${m.id}`;
    case 'create-api-key':
    case 'delete-api-key':
      return apiKeyMutationCall(m);
  }
}
