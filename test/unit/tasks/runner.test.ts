import { describe, expect, it } from 'vitest';
import { createListrRunner } from '../../../src/tasks/listr-runner.js';
import { createOutputHost } from '../../../src/tasks/output.js';
import { createPlainRunner, type Phase } from '../../../src/tasks/phase.js';
import { InterruptedError } from '../../../src/util/errors.js';
import { memoryStreams } from './streams.js';

type Ctx = { log: string[] };

const phases: Phase<Ctx>[] = [
  { title: 'first', run: async (ctx) => void ctx.log.push('first') },
  {
    title: 'skipped',
    skip: () => 'nothing to do',
    run: async (ctx) => void ctx.log.push('skipped'),
  },
  {
    title: 'devices',
    items: () => [
      { key: 'a', title: 'host-a' },
      { key: 'b', title: 'host-b' },
    ],
    run: async (ctx, io) => {
      io.progress.item('a', 'running', 'creating');
      io.progress.item('a', 'done', 'created');
      io.progress.item('b', 'done', 'created');
      ctx.log.push('devices');
    },
  },
];

describe('phase runners', () => {
  it('the plain runner runs phases in order, honours skip and stops when aborted', async () => {
    const ctx: Ctx = { log: [] };
    await createPlainRunner().run(phases, ctx, new AbortController().signal);
    expect(ctx.log).toEqual(['first', 'devices']);
    const ac = new AbortController();
    ac.abort();
    await expect(createPlainRunner().run(phases, { log: [] }, ac.signal)).rejects.toBeInstanceOf(
      InterruptedError,
    );
  });

  it('the listr2 runner draws on stderr only, with one line per item', async () => {
    const s = memoryStreams({ tty: false });
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    const ctx: Ctx = { log: [] };
    await createListrRunner(host).run(phases, ctx, new AbortController().signal);
    expect(ctx.log).toEqual(['first', 'devices']);
    expect(s.out()).toBe('');
    expect(s.err()).toContain('first');
    expect(s.err()).toContain('host-a');
    expect(s.err()).toContain('host-b');
    expect(s.err()).toContain('nothing to do');
  });

  it("the listr2 runner rethrows the phase's own error, not a listr wrapper", async () => {
    const s = memoryStreams({ tty: false });
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    class Boom extends Error {}
    const failing: Phase<Ctx>[] = [
      {
        title: 'wait',
        items: () => [{ key: 'a', title: 'host-a' }],
        run: async (_ctx, io) => {
          io.progress.item('a', 'failed', 'failed');
          throw new Boom('host-a failed: bad disk');
        },
      },
      { title: 'never', run: async (ctx) => void ctx.log.push('never') },
    ];
    const ctx: Ctx = { log: [] };
    const err = await createListrRunner(host)
      .run(failing, ctx, new AbortController().signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Boom);
    expect(ctx.log).toEqual([]);
  });
});
