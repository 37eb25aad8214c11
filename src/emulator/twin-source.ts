import { findPlan } from './catalog.js';
import type { EmulatorContext } from './context.js';
import { addressesVisible } from './render.js';
import { stateAt } from './lifecycle.js';
import { isUuid } from './ids.js';
import type { CredentialCheck, TwinDevice, TwinSource } from './twin/index.js';

/**
 * What the Kubernetes twin sees of the emulator: the own project's devices as the Metal API shows
 * them — state on the virtual clock, the stored userdata (`GET /devices/{id}/userdata`), plan,
 * metro, facility and management addresses (loopback) — and the plan's size for node capacity;
 * and whether an API key may use a project, as the API would answer a CCM using it.
 */
export function twinSource(ctx: EmulatorContext): TwinSource {
  return {
    devices(): TwinDevice[] {
      const now = ctx.clock.now();
      const own = new Set(ctx.state.projects.filter((p) => p.access === 'own').map((p) => p.id));
      return ctx.state.devices
        .filter((d) => own.has(d.projectId))
        .map((d) => {
          const visible = addressesVisible(d, now);
          const mgmt = ctx.state.assignments.filter(
            (a) => a.deviceId === d.id && a.management && a.addressFamily === 4,
          );
          const plan = findPlan(ctx.state.catalog, d.plan);
          return {
            id: d.id,
            hostname: d.hostname,
            state: stateAt(d, now),
            userdata: d.userdata,
            plan: d.plan,
            metro: d.metro,
            facility: d.facility,
            ...(visible ? addressesOf(mgmt) : {}),
            ...(plan ? sizeOf(plan.specs) : {}),
          };
        });
    },

    checkCredentials(apiKey: string, projectId: string): CredentialCheck {
      // Which projects the key may use: the user's token reaches the user's own projects, a
      // project API key its project.
      const allowed = projectsOfKey(ctx, apiKey);
      if (!allowed) {
        return {
          ok: false,
          reason:
            'the Metal API refuses its apiKey (401 Invalid authentication token): it is not a ' +
            "key of this emulator (the user's token or a project API key)",
        };
      }
      const id = projectId.trim().toLowerCase();
      const project = isUuid(id) ? ctx.state.projects.find((p) => p.id === id) : undefined;
      if (!project) {
        return {
          ok: false,
          reason: `its projectID ${JSON.stringify(projectId.slice(0, 64))} is not a project of this emulator (the Metal API answers 404)`,
        };
      }
      if (!allowed.has(project.id)) {
        return {
          ok: false,
          reason: `its apiKey may not use project ${project.id} (403 You are not authorized to view this project)`,
        };
      }
      return { ok: true };
    },
  };
}

/** The ids of the projects `apiKey` may use, or undefined for an unknown key. */
function projectsOfKey(ctx: EmulatorContext, apiKey: string): Set<string> | undefined {
  if (apiKey === ctx.state.token) {
    return new Set(ctx.state.projects.filter((p) => p.access === 'own').map((p) => p.id));
  }
  // A project API key (routes/api-keys.ts) reaches its own project; a read-only one still lets
  // the CCM read the devices it initialises nodes from.
  const key = (ctx.state.apiKeys ?? []).find((k) => k.token === apiKey);
  return key ? new Set([key.projectId]) : undefined;
}

function addressesOf(assignments: Array<{ public: boolean; address: string }>): {
  publicV4?: string;
  privateV4?: string;
} {
  const pub = assignments.find((a) => a.public)?.address;
  const priv = assignments.find((a) => !a.public)?.address;
  return { ...(pub ? { publicV4: pub } : {}), ...(priv ? { privateV4: priv } : {}) };
}

/** Logical CPUs (two threads per core) and memory of a plan. */
function sizeOf(specs: {
  cpus: Array<{ count: number; type: string }>;
  memory: { total: string };
}): { cpus?: number; memoryBytes?: number } {
  const cores = specs.cpus.reduce((n, c) => {
    const m = /(\d+)-Core/.exec(c.type);
    return n + c.count * (m ? Number(m[1]) : 1);
  }, 0);
  const mem = /^(\d+)\s*([GT])B$/i.exec(specs.memory.total);
  const memoryBytes = mem
    ? Number(mem[1]) * 2 ** (mem[2]!.toUpperCase() === 'T' ? 40 : 30)
    : undefined;
  return {
    ...(cores > 0 ? { cpus: cores * 2 } : {}),
    ...(memoryBytes ? { memoryBytes } : {}),
  };
}
