/**
 * The renderer is chosen in one place (aesthetics "absorb" 13): live `default` rendering only when
 * both stdout and stderr are TTYs (listr2's default renderer requires a TTY stdout even though we
 * draw on stderr) and the terminal reports a width, `verbose` with `--debug`, `simple` otherwise
 * (CI, pipes, `-o json | jq`, and terminals that report 0 columns — `script -qc`, `docker exec -t`
 * — where listr2 would wrap the live view at one character per line).
 */

/** listr2 renderer names we use. */
export type RendererName = 'default' | 'simple' | 'verbose';

/** Picks the renderer. Pure. */
export function chooseRenderer(input: {
  stdoutTTY: boolean;
  stderrTTY: boolean;
  debug: boolean;
  /** The width listr2's live view wraps to (`process.stdout.columns`); 0/undefined: unknown. */
  columns?: number;
}): RendererName {
  if (input.debug) return 'verbose';
  const width = input.columns ?? 0;
  return input.stdoutTTY && input.stderrTTY && width > 0 ? 'default' : 'simple';
}
