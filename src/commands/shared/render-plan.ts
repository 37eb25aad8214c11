/**
 * How a plan looks: text for people (grouped symbols like Terraform's), JSON for scripts.
 */
import type { ChalkInstance } from 'chalk';
import { describeMutation, type Mutation } from '../../platforms/equinixmetal/executor.js';
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
  lines.push('', summaryLine(p));
  return lines;
}

/** `Plan: 2 to create, 1 to update, 0 to replace, 1 to delete, 3 unchanged.` */
export function summaryLine(p: Plan): string {
  const c = p.counts;
  return `Plan: ${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete, ${c.noop} unchanged.`;
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
      return `DELETE /ips/${m.id}`;
  }
}
