/**
 * What the `loko component` commands share: loading the configuration with every component's
 * body spec (a configuration is optional: without `-c` and without *.lokocfg files in the working
 * directory, components run with their defaults), the kubeconfig to talk to, the Metal facts a
 * render needs, and the component context.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ConfiguredComponent } from '../../components/resolve.js';
import type { ComponentContext } from '../../components/types.js';
import type { ClusterConfig, LoadResult } from '../../config/types.js';
import type { KubeClient } from '../../kube/client.js';
import { LokoError } from '../../util/errors.js';
import type { CommandContext } from '../shared/context.js';

/** The configuration as the component commands see it. */
export interface ComponentConfig {
  /** The load; an empty one (no components) when no configuration was found. */
  result: Pick<LoadResult, 'components' | 'sources' | 'files'>;
  /** The cluster block, when there is one. */
  cluster?: ClusterConfig;
}

/**
 * Loads the configuration with the component registry's specs, so `component` bodies are checked
 * like the cluster block (file:line:col, did-you-mean). With the default `-c .` and no *.lokocfg
 * in the working directory, there is no configuration (not an error). Warnings go to stderr;
 * errors throw ConfigError.
 */
export async function loadComponentConfig(ctx: CommandContext): Promise<ComponentConfig> {
  if (ctx.globals.config === '.' && !(await hasConfigFiles(ctx.cwd))) {
    return { result: { components: new Map(), sources: new Map(), files: [] } };
  }
  const { checkPathFlags, parseVars, printDiagnostics } = await import('../shared/load-config.js');
  const { ConfigError } = await import('../shared/errors.js');
  const { loadConfig } = await import('../../config/index.js');
  const { componentSpecs } = await import('../../components/registry.js');
  await checkPathFlags(ctx);
  const result = await loadConfig({
    path: path.resolve(ctx.cwd, ctx.globals.config),
    vars: parseVars(ctx.globals.var),
    varFiles: ctx.globals.varFile.map((f) => path.resolve(ctx.cwd, f)),
    env: ctx.env,
    componentSpecs: componentSpecs(),
  });
  if (result.diagnostics.some((d) => d.severity === 'error')) {
    throw new ConfigError(result.diagnostics);
  }
  await printDiagnostics(ctx, result.diagnostics);
  return { result, ...(result.cluster ? { cluster: result.cluster } : {}) };
}

async function hasConfigFiles(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.some((n) => n.endsWith('.lokocfg'));
}

/**
 * The kubeconfig the commands use: `--kubeconfig`, else the cluster's admin kubeconfig
 * `<asset_dir>/auth/kubeconfig`. Throws a LokoError naming the flag or the file when there is
 * none.
 */
export async function kubeconfigFor(
  ctx: CommandContext,
  flag: string | undefined,
  cluster: ClusterConfig | undefined,
): Promise<string> {
  const { existsSync } = await import('node:fs');
  if (flag) {
    const file = path.resolve(ctx.cwd, flag);
    if (!existsSync(file)) {
      throw new LokoError(`--kubeconfig ${flag}: no such file`, {
        hint: 'Pass the kubeconfig of the cluster to install the components on.',
      });
    }
    return file;
  }
  if (!cluster) {
    throw new LokoError('no cluster to talk to: no cluster block in the configuration', {
      hint: 'Pass --kubeconfig <file> for a cluster loko did not create, or -c <dir> with the cluster configuration.',
    });
  }
  const { kubeconfigPath } = await import('../../platforms/equinixmetal/machine-bootstrap.js');
  const file = kubeconfigPath(cluster.assetDir);
  if (!existsSync(file)) {
    throw new LokoError(
      `cluster "${cluster.clusterName}" has no kubeconfig yet: ${file} does not exist`,
      {
        hint: '`loko cluster apply` writes it once the Kubernetes API answers; or pass --kubeconfig <file>.',
      },
    );
  }
  return file;
}

/** A Kubernetes client for `file` (its current context; the CA is always verified). */
export async function kubeClientFor(file: string): Promise<KubeClient> {
  const { KubeClient } = await import('../../kube/client.js');
  return KubeClient.fromFile(file);
}

/** What a render may know from the Metal API about the cluster. */
export interface MetalContext {
  projectId?: string;
  /** The project API key loko created for the cluster (a secret). */
  metalApiKey?: string;
  controlPlaneEndpoint?: ComponentContext['controlPlaneEndpoint'];
}

/**
 * The Metal facts of `cluster` for rendering its components:
 * - the control-plane endpoint: the address of the cluster's admin kubeconfig
 *   (`<asset_dir>/auth/kubeconfig`, written by `cluster apply` for the Elastic IP), port 6443 and
 *   the EIP tag `controlPlaneEipTag(cluster)`;
 * - the project API key loko created for the cluster (`findClusterApiKey`: read only, never
 *   creates; `cluster apply` creates it), when a Metal API is configured (`--emulator`,
 *   `--api-url` or METAL_API_URL).
 * Without them, components render placeholders, which apply refuses to send. A Metal API that
 * fails is a warning for `render` (placeholders are shown) and an error for `apply`.
 */
export async function resolveMetalContext(
  ctx: CommandContext,
  cluster: ClusterConfig | undefined,
  purpose: 'render' | 'apply',
  /** The caller holds the asset directory's lock (the embedded emulator's state lives there). */
  locked = false,
): Promise<MetalContext> {
  const open = await openMetalContext(ctx, cluster, purpose, locked);
  await open.close();
  const { close: _close, ...facts } = open;
  return facts;
}

/**
 * {@link resolveMetalContext}, keeping the Metal connection open until `close()`: with
 * `--emulator`, the embedded emulator runs the Kubernetes twin's stand-ins (e.g. the admission
 * webhooks of its fake pods), which an apply to the twin needs while it runs.
 */
export async function openMetalContext(
  ctx: CommandContext,
  cluster: ClusterConfig | undefined,
  purpose: 'render' | 'apply',
  locked = false,
): Promise<MetalContext & { close(): Promise<void> }> {
  const none = async (): Promise<void> => {};
  if (!cluster) return { close: none };
  const out: MetalContext = { projectId: cluster.projectId };
  const { controlPlaneEipTag, ENDPOINT_PORT } =
    await import('../../platforms/equinixmetal/endpoint.js');
  const address = await kubeconfigAddress(cluster);
  if (address) {
    out.controlPlaneEndpoint = {
      address,
      port: ENDPOINT_PORT,
      eipTag: controlPlaneEipTag(cluster.clusterName),
    };
  }
  const { resolveMetalEndpoint } = await import('../../metal/endpoint.js');
  if (
    !ctx.globals.emulator &&
    !resolveMetalEndpoint({ apiUrlFlag: ctx.globals.apiUrl, env: ctx.env })
  ) {
    ctx.host.debug('no Metal API configured: the cluster API key is not looked up');
    return { ...out, close: none };
  }
  const { openMetal } = await import('../shared/endpoint.js');
  const { findClusterApiKey } = await import('../../platforms/equinixmetal/api-key.js');
  const { acquireClusterLock } = await import('../../platforms/equinixmetal/lock.js');
  let lock: { release(): Promise<void> } | undefined;
  let metal: Awaited<ReturnType<typeof openMetal>> | undefined;
  const close = async (): Promise<void> => {
    try {
      await metal?.close();
    } finally {
      await lock?.release();
    }
  };
  try {
    if (ctx.globals.emulator && !locked)
      lock = await acquireClusterLock(cluster.assetDir, `loko component ${purpose}`);
    metal = await openMetal(ctx, cluster);
    const key = await findClusterApiKey({
      api: metal.api,
      projectId: cluster.projectId,
      clusterName: cluster.clusterName,
    });
    if (key) out.metalApiKey = key.token;
    else ctx.host.debug(`no API key described loko:cluster=${cluster.clusterName} in the project`);
    return { ...out, close };
  } catch (err) {
    await close();
    if (purpose === 'apply') throw err;
    ctx.host.warn(
      `cannot read the cluster's API key from the Metal API (${err instanceof Error ? err.message : String(err)}); rendering placeholders`,
    );
    return { ...out, close: none };
  }
}

/** The host of the cluster's admin kubeconfig server URL (the control-plane Elastic IP), if any. */
async function kubeconfigAddress(cluster: ClusterConfig): Promise<string | undefined> {
  const { kubeconfigPath } = await import('../../platforms/equinixmetal/machine-bootstrap.js');
  const server = await kubeconfigServer(kubeconfigPath(cluster.assetDir));
  if (!server) return undefined;
  try {
    return new URL(server).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

/**
 * The `server:` of kubeconfig `file`: its current context's cluster, else its first cluster (a
 * kubeconfig loko writes has exactly one); undefined when unreadable.
 */
async function kubeconfigServer(file: string): Promise<string | undefined> {
  const { readFile } = await import('node:fs/promises');
  const { parse } = await import('yaml');
  try {
    const doc = parse(await readFile(file, 'utf8')) as {
      'current-context'?: string;
      contexts?: Array<{ name?: string; context?: { cluster?: string } }>;
      clusters?: Array<{ name?: string; cluster?: { server?: string } }>;
    } | null;
    const clusters = doc?.clusters ?? [];
    const current = doc?.contexts?.find((c) => c.name === doc['current-context'])?.context?.cluster;
    const chosen = (current && clusters.find((c) => c.name === current)) || clusters[0];
    return chosen?.cluster?.server;
  } catch {
    return undefined;
  }
}

/**
 * Throws a LokoError unless kubeconfig `file` talks to the API server of `cluster` (its admin
 * kubeconfig's server): `component apply --kubeconfig` in a directory holding another cluster's
 * configuration would otherwise render that cluster's Metal API key and Elastic IP tag into it.
 */
export async function assertSameCluster(file: string, cluster: ClusterConfig): Promise<void> {
  const { kubeconfigPath } = await import('../../platforms/equinixmetal/machine-bootstrap.js');
  const [target, own] = await Promise.all([
    kubeconfigServer(file),
    kubeconfigServer(kubeconfigPath(cluster.assetDir)),
  ]);
  if (target !== undefined && own !== undefined && target === own) return;
  throw new LokoError(
    `--kubeconfig ${file} points at ${target ?? 'an unknown API server'}, not at cluster "${cluster.clusterName}" of the configuration (${own ?? 'no admin kubeconfig yet'})`,
    {
      hint: `loko will not install cluster "${cluster.clusterName}"'s Metal API key and Elastic IP tag into another cluster. For a cluster loko did not create, run with -c <dir> holding only its component blocks (no cluster block); for "${cluster.clusterName}", drop --kubeconfig.`,
    },
  );
}

/**
 * Builds the component context for `set` from the configuration (cluster facts, manifest cache
 * in the asset dir, `manifest_mirror`/`manifest_dir`, LOKO_MANIFEST_MIRROR) and `metal`.
 * `all` is every component of the cluster's apply (for cross-component choices).
 */
export async function componentContextFor(
  ctx: CommandContext,
  config: ComponentConfig,
  set: readonly ConfiguredComponent[],
  all: Iterable<string>,
  metal: MetalContext,
): Promise<ComponentContext> {
  const { buildComponentContext } = await import('../../components/context.js');
  const c = config.cluster;
  return buildComponentContext({
    set,
    env: ctx.env,
    ...(ctx.globals.emulator ? { loopbackOnly: true } : {}),
    signal: ctx.signal,
    components: all,
    ...(c
      ? {
          assetDir: c.assetDir,
          clusterName: c.clusterName,
          metro: c.metro,
          podCidr: c.podCidr,
          serviceCidr: c.serviceCidr,
          ...(c.manifestMirror ? { manifestMirror: c.manifestMirror } : {}),
          ...(c.manifestDir ? { manifestDir: c.manifestDir } : {}),
        }
      : {}),
    ...metal,
  });
}

/**
 * Every component a cluster apply would install for this configuration: the configured ones and
 * the bootstrap ones.
 */
export async function clusterComponentNames(config: ComponentConfig): Promise<string[]> {
  const { COMPONENTS } = await import('../../components/registry.js');
  return COMPONENTS.filter((c) => c.bootstrap || config.result.components.has(c.name)).map(
    (c) => c.name,
  );
}
