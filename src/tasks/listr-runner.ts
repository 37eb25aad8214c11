/**
 * The phase runner on listr2: one task per phase, one sub-line per item (device) with its live
 * state, everything drawn on stderr. Heavy (listr2 and its renderers): import it lazily.
 */
import {
  Listr,
  ListrLogger,
  ProcessOutput,
  type ListrRendererValue,
  type ListrTask,
  type ListrTaskWrapper,
} from 'listr2';
import { InterruptedError } from '../util/errors.js';
import type { OutputHost } from './output.js';
import type { ItemState, Phase, PhaseItem, PhaseRunner, ProgressReporter } from './phase.js';
import { chooseRenderer } from './renderer.js';

// listr2's wrapper generics are wide; we only use title/output/skip.
type Wrapper = ListrTaskWrapper<unknown, never, never>;

/** Creates a runner that renders with listr2 on `host`'s stderr. */
export function createListrRunner(host: OutputHost): PhaseRunner {
  const stderr = host.streams.stderr as NodeJS.WriteStream;
  const renderer = chooseRenderer({
    stdoutTTY: Boolean(host.streams.stdout.isTTY),
    stderrTTY: Boolean(host.streams.stderr.isTTY),
    debug: host.debugEnabled,
    // listr2's default renderer wraps to process.stdout.columns (its own choice, not our stream).
    columns: process.stdout.columns,
  });
  const logger = new ListrLogger({
    processOutput: new ProcessOutput(stderr, stderr),
    useIcons: true,
  });

  return {
    async run<Ctx>(phases: Phase<Ctx>[], ctx: Ctx, signal: AbortSignal): Promise<void> {
      let phaseError: unknown;
      const tasks: ListrTask<Ctx>[] = phases.map((phase) => ({
        title: phase.title,
        skip: (c: Ctx) => phase.skip?.(c) || false,
        task: (c: Ctx, task) => {
          if (signal.aborted) throw new InterruptedError();
          const items = phase.items?.(c) ?? [];
          const board = new ItemBoard(items, host, task as unknown as Wrapper);
          const runP = phase.run(c, { signal, progress: board.reporter() });
          const done = runP.then(
            () => board.close(true),
            (err: unknown) => {
              phaseError = err;
              board.close(false);
              // listr shows only the first line; the CLI's error handler prints the whole error.
              throw new Error(firstLine(err));
            },
          );
          if (items.length === 0) return done;
          done.catch(() => {}); // awaited by PhaseSubtasks.run
          return new PhaseSubtasks(
            items.map((it) => ({
              title: it.title,
              task: (_: unknown, sub: Wrapper) => board.runItem(it.key, sub),
            })) as ListrTask[],
            { concurrent: true, exitOnError: true },
            (task as unknown as { task: ConstructorParameters<typeof Listr>[2] }).task,
            done,
          ) as unknown as Listr<Ctx>;
        },
      }));

      const list = new Listr<Ctx, 'default' | 'simple' | 'verbose', 'simple'>(tasks, {
        ctx,
        renderer,
        fallbackRenderer: 'simple',
        rendererOptions: {
          logger,
          collapseSubtasks: false,
          collapseSkips: false,
          showErrorMessage: false,
        } as never,
        fallbackRendererOptions: { logger } as never,
        exitOnError: true,
        // We own SIGINT (tasks/signals.ts); listr2's handler would exit 127.
        registerSignalListeners: false,
      });
      try {
        await list.run();
      } catch (err) {
        throw phaseError ?? err;
      }
      if (phaseError) throw phaseError;
    },
  };
}

/**
 * The item lines of one phase. listr2 runs a returned Listr as the task's subtasks; this one also
 * awaits the phase itself, so the phase's own error fails the task without an extra line.
 */
class PhaseSubtasks extends Listr<unknown, ListrRendererValue, ListrRendererValue> {
  constructor(
    tasks: ListrTask[],
    options: ConstructorParameters<typeof Listr>[1],
    parent: ConstructorParameters<typeof Listr>[2],
    private readonly done: Promise<void>,
  ) {
    super(tasks, options, parent);
  }

  override async run(ctx?: unknown): Promise<unknown> {
    const result = await super.run(ctx);
    await this.done;
    return result;
  }
}

interface Entry {
  item: PhaseItem;
  state: ItemState;
  detail?: string;
  sub?: Wrapper;
  final: Promise<void>;
  settle: () => void;
}

/** Tracks items of one phase and mirrors their state onto listr2 subtasks. */
class ItemBoard {
  private readonly entries = new Map<string, Entry>();
  private phaseDone!: Promise<boolean>;
  private resolvePhase!: (ok: boolean) => void;

  constructor(
    items: PhaseItem[],
    private readonly host: OutputHost,
    private readonly task: Wrapper,
  ) {
    this.phaseDone = new Promise((r) => (this.resolvePhase = r));
    for (const item of items) {
      let settle!: () => void;
      const final = new Promise<void>((r) => (settle = r));
      this.entries.set(item.key, { item, state: 'pending', final, settle });
    }
  }

  reporter(): ProgressReporter {
    return {
      item: (key, state, detail) => {
        const e = this.entries.get(key);
        if (!e) {
          this.task.output = `${key}: ${detail ?? state}`;
          return;
        }
        e.state = state;
        e.detail = detail;
        if (e.sub) e.sub.title = this.title(e);
        if (state === 'done' || state === 'failed' || state === 'skipped') e.settle();
      },
      status: (text) => {
        this.task.output = text;
      },
      warn: (text) => this.host.warn(text),
      debug: (text) => this.host.debug(text),
    };
  }

  /** The subtask body of one item: live until the item is final, then done/failed/skipped. */
  async runItem(key: string, sub: Wrapper): Promise<void> {
    const e = this.entries.get(key)!;
    e.sub = sub;
    sub.title = this.title(e);
    await Promise.race([e.final, this.phaseDone]);
    if (e.state === 'done') return;
    // Failures show only once the phase ended, so a failing item never stops a phase early.
    const ok = await this.phaseDone;
    if (e.state === 'failed' && !ok) {
      sub.title = e.item.title;
      throw new Error(e.detail ?? 'failed');
    }
    sub.title = e.item.title;
    // Only an item never started counts as unchanged; one left running did not finish.
    sub.skip(
      e.state === 'failed'
        ? `failed: ${e.detail ?? ''}`
        : e.state === 'running'
          ? `not finished${e.detail ? `: ${e.detail}` : ''}`
          : ok
            ? 'unchanged'
            : 'not finished',
    );
  }

  close(ok: boolean): void {
    this.resolvePhase(ok);
  }

  private title(e: Entry): string {
    if (!e.detail) return e.item.title;
    const c = this.host.color;
    return `${e.item.title} ${e.state === 'failed' ? c.red(e.detail) : c.dim(e.detail)}`;
  }
}

function firstLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return (msg.split('\n')[0] ?? '').replace(/:$/, '');
}
