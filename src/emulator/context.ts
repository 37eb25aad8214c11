import type { Clock } from './clock.js';
import { ApiError, notFound } from './errors.js';
import type { FaultInjector } from './faults.js';
import { isUuid } from './ids.js';
import type { RateLimiter } from './ratelimit.js';
import type { RequestLog } from './requestlog.js';
import type { DeviceRecord, EmulatorState, ProjectRecord } from './state.js';

/** Where the emulator reports what it does (no console: the embedding CLI decides). */
export interface EmulatorLogger {
  info(msg: string): void;
}

/** Everything route handlers share. */
export interface EmulatorContext {
  state: EmulatorState;
  clock: Clock;
  logger: EmulatorLogger;
  requestLog: RequestLog;
  faults: FaultInjector;
  limiter: RateLimiter;
  /** Call after mutating `state`: the state file is written soon after. */
  changed(): void;
}

/** The project `id` if the token may use it: 404 when unknown, 403 when it is someone else's. */
export function requireProject(ctx: EmulatorContext, id: string): ProjectRecord {
  const p = isUuid(id) ? ctx.state.projects.find((x) => x.id === id.toLowerCase()) : undefined;
  if (!p) throw notFound();
  if (p.access !== 'own') throw new ApiError(403, 'You are not authorized to view this project');
  return p;
}

/** The device `id` (in a project the token may use), else 404. */
export function requireDevice(ctx: EmulatorContext, id: string): DeviceRecord {
  const d = isUuid(id) ? ctx.state.devices.find((x) => x.id === id.toLowerCase()) : undefined;
  if (!d) throw notFound();
  requireProject(ctx, d.projectId);
  return d;
}
