/** The cluster summary as a table for people. */
import type { ChalkInstance } from 'chalk';
import type { ClusterSummary } from '../../platforms/equinixmetal/summary.js';

/** Lines of the device table plus where things are. */
export function summaryLines(s: ClusterSummary, c: ChalkInstance): string[] {
  const rows = s.devices.map((d) => [
    d.hostname,
    d.role === 'controller' ? 'controller' : `worker (${d.pool})`,
    d.state,
    d.publicIPv4 ?? '-',
    d.plan,
    d.metro ?? '-',
  ]);
  const header = ['HOSTNAME', 'ROLE', 'STATE', 'PUBLIC IPV4', 'PLAN', 'METRO'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string =>
    r
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const controllers = s.devices.filter((d) => d.role === 'controller').length;
  const workers = s.devices.length - controllers;
  const active = s.devices.filter((d) => d.state === 'active').length;
  return [
    `Cluster "${s.clusterName}": ${active}/${s.devices.length} devices active (${controllers} controller${controllers === 1 ? '' : 's'}, ${workers} worker${workers === 1 ? '' : 's'}).`,
    '',
    `  ${c.bold(fmt(header))}`,
    ...rows.map((r) => `  ${fmt(r)}`),
    '',
  ];
}
