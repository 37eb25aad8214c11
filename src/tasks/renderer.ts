/**
 * The renderer is chosen in one place (aesthetics "absorb" 13): live `default` rendering only when
 * both stdout and stderr are TTYs (listr2's default renderer requires a TTY stdout even though we
 * draw on stderr), `verbose` with `--debug`, `simple` otherwise (CI, pipes, `-o json | jq`).
 */

/** listr2 renderer names we use. */
export type RendererName = 'default' | 'simple' | 'verbose';

/** Picks the renderer. Pure. */
export function chooseRenderer(input: {
  stdoutTTY: boolean;
  stderrTTY: boolean;
  debug: boolean;
}): RendererName {
  if (input.debug) return 'verbose';
  return input.stdoutTTY && input.stderrTTY ? 'default' : 'simple';
}
