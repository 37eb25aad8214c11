/**
 * Building the {@link ComponentContext} a render gets: the caller's cluster facts plus the
 * verified texts of the pinned upstream manifests the chosen components need.
 */
import path from 'node:path';
import { LokoError } from '../util/errors.js';
import { fetchUpstreamManifests, userManifestCacheDir } from './upstream/fetch.js';
import type { ConfiguredComponent } from './resolve.js';
import type { ComponentContext, UpstreamManifest } from './types.js';

/** Environment variable that overrides `manifest_mirror`. */
export const MANIFEST_MIRROR_ENV = 'LOKO_MANIFEST_MIRROR';

/** What {@link buildComponentContext} needs. */
export interface ComponentContextInput {
  /** The components of this apply/render (their `upstream` lists are fetched). */
  set: readonly ConfiguredComponent[];
  /**
   * The cluster's asset dir: manifests are cached in `<assetDir>/manifests` (the per-user cache is
   * read too). Unset (no cluster block): `$XDG_CACHE_HOME/loko/manifests`, else
   * `~/.cache/loko/manifests`.
   */
  assetDir?: string;
  /** `manifest_mirror` of the cluster block; {@link MANIFEST_MIRROR_ENV} in `env` wins. */
  manifestMirror?: string;
  /** `manifest_dir` of the cluster block (absolute). */
  manifestDir?: string;
  /** Environment (default process.env), for {@link MANIFEST_MIRROR_ENV} and the cache dir. */
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  clusterName?: string;
  projectId?: string;
  metro?: string;
  podCidr?: string;
  serviceCidr?: string;
  controlPlaneEndpoint?: ComponentContext['controlPlaneEndpoint'];
  /** The project API key for the cluster (a secret). */
  metalApiKey?: string;
  /**
   * All component names of the apply (configured + bootstrap) when `set` is a subset, e.g.
   * `component apply metallb` on a cluster that also runs the bootstrap components. Default: the
   * names of `set`.
   */
  components?: Iterable<string>;
  /** Download only from loopback hosts (runs on the embedded emulator stay on the machine). */
  loopbackOnly?: boolean;
  /** Replaces the fetch (tests); default `fetchUpstreamManifests` of ./upstream/fetch.ts. */
  fetch?: typeof fetchUpstreamManifests;
}

/**
 * Where fetched manifests are cached: `<assetDir>/manifests` with a cluster, else the per-user
 * cache `${XDG_CACHE_HOME:-$HOME/.cache}/loko/manifests`.
 */
export function manifestCacheDir(
  assetDir: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string {
  if (assetDir) return path.join(assetDir, 'manifests');
  return userManifestCacheDir(env);
}

/**
 * Fetches (or reads from the cache / `manifest_dir` / mirror) and verifies every upstream
 * manifest of `input.set`, and returns the context for rendering them. Rejects with the fetch's
 * LokoErrors (digest mismatch naming the URL and both digests, unreachable URL with the offline
 * options) and InterruptedError when `signal` aborts.
 */
export async function buildComponentContext(
  input: ComponentContextInput,
): Promise<ComponentContext> {
  const env = input.env ?? process.env;
  const manifests: UpstreamManifest[] = input.set.flatMap((c) => c.def.upstream);
  const fromEnv = env[MANIFEST_MIRROR_ENV]?.trim();
  const mirror = fromEnv || input.manifestMirror;
  if (fromEnv) checkMirrorUrl(fromEnv);
  const fetch = input.fetch ?? fetchUpstreamManifests;
  const cacheDir = manifestCacheDir(input.assetDir, env);
  const userCache = userManifestCacheDir(env);
  const upstream =
    manifests.length === 0
      ? new Map<string, string>()
      : await fetch(manifests, {
          cacheDir,
          // The per-user cache (`npm run kube:build` fills it) serves offline runs of any cluster.
          ...(cacheDir !== userCache ? { sharedCacheDirs: [userCache] } : {}),
          ...(input.loopbackOnly ? { loopbackOnly: true } : {}),
          ...(mirror ? { mirror: mirror.replace(/\/+$/, '') } : {}),
          ...(input.manifestDir ? { dir: input.manifestDir } : {}),
          ...(input.signal ? { signal: input.signal } : {}),
        });
  const ctx: ComponentContext = {
    upstream,
    components: new Set(input.components ?? input.set.map((c) => c.def.name)),
  };
  if (input.clusterName !== undefined) ctx.clusterName = input.clusterName;
  if (input.projectId !== undefined) ctx.projectId = input.projectId;
  if (input.metro !== undefined) ctx.metro = input.metro;
  if (input.podCidr !== undefined) ctx.podCidr = input.podCidr;
  if (input.serviceCidr !== undefined) ctx.serviceCidr = input.serviceCidr;
  if (input.controlPlaneEndpoint !== undefined)
    ctx.controlPlaneEndpoint = input.controlPlaneEndpoint;
  if (input.metalApiKey !== undefined) ctx.metalApiKey = input.metalApiKey;
  return ctx;
}

/** Throws a LokoError naming {@link MANIFEST_MIRROR_ENV} unless `value` is an http(s) URL. */
function checkMirrorUrl(value: string): void {
  let ok = false;
  try {
    const u = new URL(value);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new LokoError(`${MANIFEST_MIRROR_ENV}=${value} is not an http(s) URL`, {
      hint: `Set ${MANIFEST_MIRROR_ENV} to the base URL of a mirror holding <host>/<path> of each pinned manifest, e.g. http://127.0.0.1:8080 (docs/manifests.md), or unset it.`,
    });
  }
}
