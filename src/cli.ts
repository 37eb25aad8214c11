/**
 * The CLI: `createProgram(deps)` builds the commander tree with the global flags; `main(argv)`
 * runs it and maps every error to a message and an exit code in one handler. Heavy modules
 * (config parser, Metal client, emulator, listr2) load inside action handlers so `loko --help`
 * stays fast.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { clusterApplyCommand } from './commands/cluster/apply.js';
import { clusterDestroyCommand } from './commands/cluster/destroy.js';
import { clusterPlanCommand } from './commands/cluster/plan.js';
import { componentCommand } from './commands/component/index.js';
import { configValidateCommand } from './commands/config/validate.js';
import { emulatorStartCommand } from './commands/emulator/start.js';
import { healthCommand } from './commands/health.js';
import { kubeconfigCommand } from './commands/kubeconfig.js';
import type { CommandContext, GlobalOptions, RunAction } from './commands/shared/context.js';
import { diagnosticJson } from './commands/shared/errors.js';
import type { Diagnostic } from './config/types.js';
import { versionCommand } from './commands/version.js';
import { createOutputHost, type OutputHost, type Streams } from './tasks/output.js';
import { trapInterrupts } from './tasks/signals.js';
import { ExitCode, InterruptedError, LokoError } from './util/errors.js';
import { version } from './version.js';

/** What the CLI needs from the process; tests pass in-memory streams. */
export interface CliDeps {
  streams: Streams;
  cwd: string;
  /** Exit for the second Ctrl-C (default `process.exit`). */
  exit?: (code: number) => void;
  /**
   * Subscribes to "stdout's reader went away" (EPIPE); returns an unsubscribe function. A run
   * that sees it is cancelled like a Ctrl-C and exits {@link EXIT_STDOUT_CLOSED}.
   */
  onStdoutClosed?: (listener: () => void) => () => void;
}

/** Exit code when stdout was closed under a run (128 + SIGPIPE, as a shell reports `yes | head`). */
export const EXIT_STDOUT_CLOSED = 141;

/** Stream errors that mean "the reader went away" (and later writes to the dead stream). */
const CLOSED_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/**
 * The real process's streams, environment and working directory.
 *
 * A reader that goes away (`loko … 2>&1 | head -3`): when stderr (progress and logs) breaks,
 * loko stops writing to it and keeps running; when stdout (results) breaks during a run, the run
 * is cancelled like a Ctrl-C (the lock is released at the next safe point) and loko exits 141.
 * Outside a run (e.g. `loko --help | head -1`) it exits at once. It never exits 0 for a run that
 * did not finish.
 */
export function processDeps(): CliDeps {
  const closedListeners = new Set<() => void>();
  let stdoutClosed = false;
  let stderrClosed = false;
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code && CLOSED_CODES.has(err.code)) {
      stderrClosed = true;
      return;
    }
    throw err;
  });
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (!err.code || !CLOSED_CODES.has(err.code)) throw err;
    if (stdoutClosed) return;
    stdoutClosed = true;
    if (closedListeners.size === 0) process.exit(process.exitCode ?? 0);
    for (const listener of closedListeners) listener();
  });
  const stderr = {
    write: (chunk: string): boolean => (stderrClosed ? true : process.stderr.write(chunk)),
    get isTTY() {
      return process.stderr.isTTY;
    },
    get columns() {
      return process.stderr.columns;
    },
  };
  const stdout = {
    write: (chunk: string): boolean => (stdoutClosed ? true : process.stdout.write(chunk)),
    get isTTY() {
      return process.stdout.isTTY;
    },
  };
  return {
    streams: { stdin: process.stdin, stdout, stderr, env: process.env },
    cwd: process.cwd(),
    onStdoutClosed: (listener) => {
      if (stdoutClosed) queueMicrotask(listener);
      closedListeners.add(listener);
      return () => closedListeners.delete(listener);
    },
  };
}

const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

/** Parses a flag value that must be a positive (finite) number; the error names the flag. */
function positiveNumber(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} must be a positive number, for example 10`);
    return n;
  };
}

/**
 * Builds the command tree. `setExitCode` receives each action's exit code (commander actions
 * cannot return one).
 */
export function createProgram(deps: CliDeps, setExitCode: (code: number) => void): Command {
  const { streams } = deps;

  const runAction: RunAction = (body, actionOptions) => async (opts, cmd) => {
    const raw = cmd.optsWithGlobals() as Partial<GlobalOptions>;
    const globals: GlobalOptions = {
      config: raw.config ?? '.',
      var: raw.var ?? [],
      varFile: raw.varFile ?? [],
      apiUrl: raw.apiUrl,
      apiRate: raw.apiRate,
      emulator: raw.emulator ?? false,
      output: raw.output ?? 'text',
      color: raw.color ?? true,
      debug: raw.debug ?? false,
      yes: raw.yes ?? false,
    };
    const host = createOutputHost(streams, {
      format: globals.output,
      noColor: !globals.color,
      debug: globals.debug,
    });
    const controller = new AbortController();
    const untrap = trapInterrupts({
      controller,
      exit: deps.exit,
      onFirst: () =>
        host.warn(
          actionOptions?.interruptMessage ??
            'interrupted: stopping at the next safe point (press Ctrl-C again to exit now)',
        ),
    });
    let stdoutClosed = false;
    const unwatch = deps.onStdoutClosed?.(() => {
      stdoutClosed = true;
      controller.abort();
    });
    const ctx: CommandContext = {
      globals,
      host,
      signal: controller.signal,
      cwd: deps.cwd,
      env: streams.env,
    };
    try {
      const code = await body(ctx, opts);
      setExitCode(stdoutClosed ? EXIT_STDOUT_CLOSED : code);
    } catch (err) {
      if (stdoutClosed) {
        host.error('stdout was closed by its reader: stopped at a safe point');
        setExitCode(EXIT_STDOUT_CLOSED);
      } else {
        setExitCode(
          await reportError(err, host, deps.cwd, { interruptHint: actionOptions?.interruptHint }),
        );
      }
    } finally {
      untrap();
      unwatch?.();
    }
  };

  const program = new Command('loko')
    .description(
      'Kubernetes clusters on Equinix Metal, from an HCL configuration (with a built-in Metal API emulator)',
    )
    .option('-c, --config <dir|file>', 'configuration directory (all *.lokocfg) or one file', '.')
    .option('--var <name=value>', 'set a configuration variable (repeatable)', collect)
    .option(
      '--var-file <file>',
      'read variables from an HCL file like lokocfg.vars (repeatable)',
      collect,
    )
    .option(
      '--api-url <url>',
      'Metal API base URL (default: $METAL_API_URL; token from $METAL_AUTH_TOKEN)',
    )
    .option(
      '--api-rate <requests-per-second>',
      'client-side limit of Metal API requests per second (default: $LOKO_API_RATE, else 10)',
      positiveNumber('--api-rate'),
    )
    .option(
      '--emulator',
      'run against an embedded Metal API emulator (state in <asset_dir>/emulator; clock speed from $LOKO_EMULATOR_TIME_SCALE)',
    )
    .addOption(
      new Option('-o, --output <format>', 'output format')
        .choices(['text', 'json'])
        .default('text'),
    )
    .option('--no-color', 'disable colours (also: NO_COLOR=1)')
    .option('--debug', 'print debug logs and stack traces')
    .option('--yes', 'confirm changes and deletions without asking')
    .version(version(), '-V, --version', 'print the version')
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (s) => void streams.stdout.write(s),
      writeErr: (s) => void streams.stderr.write(s),
    })
    .exitOverride()
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  loko cluster apply -c examples/quickstart --emulator --yes',
        '  loko cluster plan -c examples/quickstart --emulator; echo "exit $?"   # 0 = no changes, 2 = changes',
        '  loko kubeconfig -c examples/quickstart --merge',
        '  loko health -c examples/quickstart',
        '  loko component list -c examples/quickstart',
        '  loko cluster destroy -c examples/quickstart --emulator --yes',
        '',
        'Exit codes: 0 success, 1 error, 2 changes pending (cluster plan), 130 interrupted,',
        '  141 stdout closed by its reader during a run (cancelled like Ctrl-C).',
      ].join('\n'),
    );

  const cluster = new Command('cluster').description(
    'plan, create and destroy the cluster (machines, control-plane Elastic IP, Kubernetes)',
  );
  cluster.addCommand(clusterPlanCommand(runAction));
  cluster.addCommand(clusterApplyCommand(runAction));
  cluster.addCommand(clusterDestroyCommand(runAction));
  const config = new Command('config').description('work with the configuration');
  config.addCommand(configValidateCommand(runAction));
  const emulator = new Command('emulator').description('the Metal API emulator');
  emulator.addCommand(emulatorStartCommand(runAction));

  for (const group of [cluster, componentCommand(runAction), config, emulator])
    program.addCommand(group);
  program.addCommand(kubeconfigCommand(runAction));
  program.addCommand(healthCommand(runAction));
  program.addCommand(versionCommand(runAction));
  // Subcommands inherit output handling so their errors and help go to our streams too.
  for (const cmd of allCommands(program)) {
    cmd.configureHelp({ showGlobalOptions: true });
    cmd.exitOverride().configureOutput({
      writeOut: (s) => void streams.stdout.write(s),
      writeErr: (s) => void streams.stderr.write(s),
    });
  }
  return program;
}

/** True when `argv` asks for `-o json` (before commander could parse it). */
function wantsJson(argv: readonly string[]): boolean {
  return argv.some(
    (a, i) =>
      a === '-ojson' ||
      a === '--output=json' ||
      ((a === '-o' || a === '--output') && argv[i + 1] === 'json'),
  );
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/** Runs the CLI with `argv` (as `process.argv`: node, script, args...). Resolves the exit code. */
export async function main(argv: string[], deps: CliDeps = processDeps()): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const program = createProgram(deps, (code) => (exitCode = code));
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander printed the usage error on stderr; scripts asking for JSON get a document too.
      if (err.exitCode !== 0 && wantsJson(argv)) {
        deps.streams.stdout.write(
          `${JSON.stringify({
            error: {
              message: err.message.replace(/^error: /, ''),
              hint: 'Run the command with --help for its arguments and flags.',
              exitCode: err.exitCode,
            },
          })}\n`,
        );
      }
      return err.exitCode;
    }
    const host = createOutputHost(deps.streams, {
      format: 'text',
      noColor: false,
      debug: argv.includes('--debug'),
    });
    return reportError(err, host, deps.cwd);
  }
  return exitCode;
}

/**
 * The one error handler: prints the error for people on stderr (and, with `-o json`, an
 * `{"error":…}` document on stdout if no result was printed) and returns the exit code.
 * Stack traces only with `--debug`. Never prints the API token (errors do not carry it).
 */
export async function reportError(
  err: unknown,
  host: OutputHost,
  cwd: string,
  opts: { interruptHint?: string } = {},
): Promise<number> {
  const { diagnostics, message, hint, exitCode } = await describeError(err, host, cwd, opts);
  const list = (err as { diagnostics?: unknown } | undefined)?.diagnostics;
  const diagnosticsJson =
    err instanceof LokoError && Array.isArray(list) && list.length > 0
      ? (list as Diagnostic[]).map(diagnosticJson)
      : undefined;
  for (const d of diagnostics) host.info(d);
  host.error(message);
  if (hint) host.info(`${host.color.dim('hint:')} ${hint}`);
  if (host.debugEnabled && err instanceof Error && err.stack) host.debug(err.stack);
  if (host.format === 'json' && !host.jsonWritten) {
    host.json({
      error: {
        message,
        ...(hint ? { hint } : {}),
        exitCode,
        ...(diagnosticsJson ? { diagnostics: diagnosticsJson } : {}),
      },
    });
  }
  return exitCode;
}

async function describeError(
  err: unknown,
  host: OutputHost,
  cwd: string,
  opts: { interruptHint?: string } = {},
): Promise<{ diagnostics: string[]; message: string; hint?: string; exitCode: number }> {
  if (err instanceof InterruptedError) {
    // A specific message (e.g. Ctrl-C at the prompt, before anything started) needs no hint.
    if (err.message !== 'interrupted')
      return { diagnostics: [], message: err.message, exitCode: ExitCode.interrupted };
    return {
      diagnostics: [],
      message: 'interrupted: stopped at a safe point',
      hint:
        opts.interruptHint ??
        'Run the same command again; it continues from what exists and creates nothing twice.',
      exitCode: ExitCode.interrupted,
    };
  }
  if (err instanceof LokoError) {
    const list = (err as { diagnostics?: unknown }).diagnostics;
    let diagnostics: string[] = [];
    if (Array.isArray(list) && list.length > 0) {
      const { formatDiagnostic } = await import('./config/index.js');
      diagnostics = list.map((d) => formatDiagnostic(d, { cwd, color: host.color.level > 0 }));
      // The diagnostics already carry each problem; the message says how many.
      const n = list.length;
      return {
        diagnostics,
        message:
          err.name === 'PreflightError'
            ? `preflight found ${n} problem${n === 1 ? '' : 's'} in the configuration`
            : err.message,
        hint: err.hint,
        exitCode: err.exitCode,
      };
    }
    return { diagnostics, message: err.message, hint: err.hint, exitCode: err.exitCode };
  }
  if (err instanceof Error && err.name === 'MetalApiError') {
    const e = err as Error & { status: number; requestId?: string };
    return {
      diagnostics: [],
      message: `the Metal API refused ${e.message}${e.requestId ? ` (request id ${e.requestId})` : ''}`,
      hint: apiHint(e.status),
      exitCode: ExitCode.error,
    };
  }
  if (err instanceof Error && err.name === 'MetalTransportError') {
    return {
      diagnostics: [],
      message: `cannot reach the Metal API: ${err.message}`,
      hint: 'Check --api-url / METAL_API_URL and the network, or use --emulator for a local run.',
      exitCode: ExitCode.error,
    };
  }
  const sys = err as NodeJS.ErrnoException | undefined;
  if (err instanceof Error && typeof sys?.code === 'string' && typeof sys.path === 'string') {
    const check = SYSTEM_CHECKS[sys.code];
    if (check) {
      return {
        diagnostics: [],
        message: `${sys.path}: ${check.what} (${sys.code}${sys.syscall ? ` in ${sys.syscall}` : ''})`,
        hint: check.hint,
        exitCode: ExitCode.error,
      };
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    diagnostics: [],
    message,
    hint: host.debugEnabled ? undefined : 'rerun with --debug for details',
    exitCode: ExitCode.error,
  };
}

/** Node system errors about a path: what happened, and what to check. */
const SYSTEM_CHECKS: Record<string, { what: string; hint: string }> = {
  EACCES: {
    what: 'permission denied',
    hint: 'Check the permissions of this path and its directories (ls -ld), or choose another path.',
  },
  EPERM: {
    what: 'operation not permitted',
    hint: 'Check the permissions and owner of this path, or choose another path.',
  },
  EEXIST: {
    what: 'already exists',
    hint: 'Remove or rename it, or choose another path.',
  },
  ENOTDIR: {
    what: 'a part of this path is a file, not a directory',
    hint: 'Check each directory in the path (for example the asset_dir in the configuration).',
  },
  EISDIR: {
    what: 'is a directory, but a file was expected',
    hint: 'Pass the path of a file, not a directory.',
  },
  ENOENT: {
    what: 'no such file or directory',
    hint: 'Check the path and that its directory exists.',
  },
};

function apiHint(status: number): string | undefined {
  if (status === 401) return 'The API key was not accepted: check METAL_AUTH_TOKEN.';
  if (status === 403)
    return "The API key has no access to this project: check project_id and the key's scope.";
  if (status === 404)
    return 'The object does not exist (any more); check project_id, or run the command again.';
  if (status === 422) return 'The API rejected the request; the messages above say why.';
  if (status === 429 || status >= 500)
    return 'The API is busy or failing; run the command again in a moment: it creates nothing twice.';
  return undefined;
}
