import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { shouldColor } from '../../../src/tasks/color.js';
import { createOutputHost } from '../../../src/tasks/output.js';
import { chooseRenderer } from '../../../src/tasks/renderer.js';
import { trapInterrupts } from '../../../src/tasks/signals.js';
import { memoryStreams } from './streams.js';

describe('colour', () => {
  it('only on a TTY, never with NO_COLOR or --no-color', () => {
    expect(shouldColor({ noColorFlag: false, env: {}, isTTY: true })).toBe(true);
    expect(shouldColor({ noColorFlag: false, env: {}, isTTY: false })).toBe(false);
    expect(shouldColor({ noColorFlag: true, env: {}, isTTY: true })).toBe(false);
    expect(shouldColor({ noColorFlag: false, env: { NO_COLOR: '1' }, isTTY: true })).toBe(false);
    expect(shouldColor({ noColorFlag: false, env: { NO_COLOR: '' }, isTTY: true })).toBe(true);
  });
});

describe('renderer choice', () => {
  it('live rendering only with TTYs; simple for pipes and CI; verbose for --debug', () => {
    expect(chooseRenderer({ stdoutTTY: true, stderrTTY: true, debug: false, columns: 120 })).toBe(
      'default',
    );
    expect(chooseRenderer({ stdoutTTY: false, stderrTTY: true, debug: false })).toBe('simple');
    expect(chooseRenderer({ stdoutTTY: true, stderrTTY: false, debug: false })).toBe('simple');
    expect(chooseRenderer({ stdoutTTY: true, stderrTTY: true, debug: true })).toBe('verbose');
  });

  it('simple when the terminal reports 0 columns (script -qc, docker exec -t)', () => {
    const tty = { stdoutTTY: true, stderrTTY: true, debug: false };
    expect(chooseRenderer({ ...tty, columns: 0 })).toBe('simple');
    expect(chooseRenderer({ ...tty, columns: undefined })).toBe('simple');
    expect(chooseRenderer({ ...tty, columns: 80 })).toBe('default');
  });
});

describe('output host', () => {
  it('results on stdout, everything else on stderr', () => {
    const s = memoryStreams();
    const host = createOutputHost(s, { format: 'text', noColor: false, debug: false });
    host.out('result');
    host.info('progress');
    host.warn('careful');
    host.error('broken');
    host.debug('hidden');
    expect(s.out()).toBe('result\n');
    expect(s.err()).toBe('progress\nwarning: careful\nerror: broken\n');
  });

  it('-o json prints exactly one document and no text results', () => {
    const s = memoryStreams();
    const host = createOutputHost(s, { format: 'json', noColor: false, debug: true });
    host.out('ignored in json mode');
    host.json({ a: 1 });
    expect(() => host.json({ b: 2 })).toThrow(/second JSON document/);
    expect(JSON.parse(s.out())).toEqual({ a: 1 });
    host.debug('shown');
    expect(s.err()).toContain('debug: shown');
  });

  it('is interactive only when stdin and stderr are TTYs', () => {
    expect(
      createOutputHost(memoryStreams({ tty: true }), {
        format: 'text',
        noColor: false,
        debug: false,
      }).interactive,
    ).toBe(true);
    expect(
      createOutputHost(memoryStreams({ tty: false }), {
        format: 'text',
        noColor: false,
        debug: false,
      }).interactive,
    ).toBe(false);
  });
});

describe('Ctrl-C', () => {
  it('the first SIGINT aborts the run, the second exits 130 at once', () => {
    const proc = new EventEmitter() as EventEmitter & Pick<NodeJS.Process, 'on' | 'off'>;
    const controller = new AbortController();
    const exits: number[] = [];
    let told = 0;
    const untrap = trapInterrupts({
      controller,
      proc,
      exit: (c) => exits.push(c),
      onFirst: () => told++,
    });
    proc.emit('SIGINT');
    expect(controller.signal.aborted).toBe(true);
    expect(told).toBe(1);
    expect(exits).toEqual([]);
    proc.emit('SIGINT');
    expect(exits).toEqual([130]);
    untrap();
    expect(proc.listenerCount('SIGINT')).toBe(0);
  });
});
