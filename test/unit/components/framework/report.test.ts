import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import type { ComponentReport } from '../../../../src/components/apply.js';
import { progressText, reportLines } from '../../../../src/commands/component/apply.js';

const report = (name: string, counts: Partial<ComponentReport>): ComponentReport => ({
  name,
  namespace: `ns-${name}`,
  objects: 0,
  created: 0,
  configured: 0,
  unchanged: 0,
  pruned: 0,
  prunedRefs: [],
  skipped: 0,
  dryRun: false,
  ...counts,
});
const plain = new Chalk({ level: 0 });

describe('component apply report', () => {
  it('a table per component and a verdict: no changes, n changed, or dry run', () => {
    const same = reportLines([report('a', { objects: 3, unchanged: 3 })], plain);
    expect(same).toEqual([
      'COMPONENT  NAMESPACE  OBJECTS  CREATED  CONFIGURED  UNCHANGED  PRUNED',
      'a          ns-a       3        0        0           3          0',
      '',
      'No changes: every object was already as rendered.',
    ]);
    const changed = reportLines(
      [
        report('a', { objects: 3, unchanged: 3 }),
        report('bbbbbbbbbbbb', { objects: 4, created: 1, configured: 1, unchanged: 2, pruned: 1 }),
      ],
      plain,
    );
    expect(changed[2]).toBe(
      'bbbbbbbbbbbb  ns-bbbbbbbbbbbb  4        1        1           2          1',
    );
    expect(changed.at(-1)).toBe('3 objects changed.');
    expect(reportLines([report('a', { objects: 1, created: 1, dryRun: true })], plain).at(-1)).toBe(
      'Dry run: nothing was stored or deleted.',
    );
  });

  it('progress: one line per step, none per applied object', () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'n' };
    expect(
      progressText({
        type: 'object',
        component: 'a',
        event: { type: 'applied', ref, action: 'created' },
      }),
    ).toBeUndefined();
    expect(
      progressText({
        type: 'object',
        component: 'a',
        event: {
          type: 'retrying',
          ref,
          webhook: 'ipaddresspoolvalidationwebhook.metallb.io',
          message: 'x',
        },
      }),
    ).toBe(
      'webhook ipaddresspoolvalidationwebhook.metallb.io not serving yet, retrying ConfigMap x',
    );
    expect(progressText({ type: 'ready', component: 'a', check: 'MetalLB webhook serves' })).toBe(
      'waiting: MetalLB webhook serves',
    );
    expect(
      progressText({
        type: 'done',
        component: 'a',
        report: report('a', { created: 2, unchanged: 1 }),
      }),
    ).toBe('2 created, 1 unchanged');
    expect(progressText({ type: 'done', component: 'a', report: report('a', {}) })).toBe(
      'nothing to apply',
    );
  });
});
