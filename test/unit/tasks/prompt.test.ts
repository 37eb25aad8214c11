import { describe, expect, it } from 'vitest';
import { createOutputHost } from '../../../src/tasks/output.js';
import { confirm, confirmationDecision } from '../../../src/tasks/prompt.js';
import { LokoError } from '../../../src/util/errors.js';
import { memoryStreams } from './streams.js';

describe('confirmation rules', () => {
  it('--yes proceeds; a TTY asks; a non-TTY refuses', () => {
    expect(confirmationDecision({ yes: true, interactive: false })).toBe('proceed');
    expect(confirmationDecision({ yes: true, interactive: true })).toBe('proceed');
    expect(confirmationDecision({ yes: false, interactive: true })).toBe('ask');
    expect(confirmationDecision({ yes: false, interactive: false })).toBe('refuse');
  });

  it('on a non-TTY without --yes, refuses with a message saying to pass --yes (exit 1)', async () => {
    const s = memoryStreams({ tty: false });
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    const err = await confirm(host, {
      question: 'Destroy?',
      action: 'destroy the cluster',
      yes: false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain('refusing to destroy the cluster');
    expect((err as LokoError).hint).toContain('--yes');
    expect((err as LokoError).exitCode).toBe(1);
    expect(s.err()).toBe('');
  });

  it('with --yes it never reads stdin', async () => {
    const s = memoryStreams({ tty: false });
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    await expect(confirm(host, { question: 'q', action: 'a', yes: true })).resolves.toBeUndefined();
  });

  it('on a TTY, only a typed "yes" proceeds; anything else exits 1', async () => {
    const yes = memoryStreams({ tty: true, input: 'yes\n' });
    await expect(
      confirm(createOutputHost(yes, { format: 'text', noColor: true, debug: false }), {
        question: 'Apply?',
        action: 'apply',
        yes: false,
      }),
    ).resolves.toBeUndefined();
    expect(yes.err()).toContain('type "yes" to continue');

    for (const answer of ['y\n', 'YES\n', '\n']) {
      const s = memoryStreams({ tty: true, input: answer });
      const err = await confirm(
        createOutputHost(s, { format: 'text', noColor: true, debug: false }),
        {
          question: 'Apply?',
          action: 'apply the changes',
          yes: false,
        },
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LokoError);
      expect((err as LokoError).exitCode).toBe(1);
      expect((err as LokoError).message).toBe(
        `answer ${JSON.stringify(answer.trim())} is not "yes": nothing was changed`,
      );
    }
  });

  it('Ctrl-D at the prompt: the error starts on a new line', async () => {
    const s = memoryStreams({ tty: true, input: '' });
    const host = createOutputHost(s, { format: 'text', noColor: true, debug: false });
    const err = await confirm(host, { question: 'Apply?', action: 'apply', yes: false }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LokoError);
    expect((err as LokoError).message).toContain('no answer');
    expect(s.err().endsWith('\n')).toBe(true);
  });
});
