/**
 * loko's real components on a twin cluster with both gates on (as the CLI runs the twin): the
 * cloud-provider-equinix-metal component, rendered with a project API key the emulator issued,
 * initialises the nodes; the flannel component (pinned upstream manifest) makes them Ready; then
 * the MetalLB component (pinned upstream manifest, address pool) goes through its webhook
 * readiness check and its IPAddressPool through the twin's webhook stand-in. What `cluster apply`
 * does after the nodes register, without the CLI around it.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cloudProviderEquinixMetal as cpem } from '../../../src/components/cloud-provider-equinix-metal/index.js';
import { flannel, FLANNEL_MANIFEST } from '../../../src/components/flannel/index.js';
import {
  metallb,
  METALLB_MANIFEST,
  type MetallbConfig,
} from '../../../src/components/metallb/index.js';
import type { ComponentContext, ComponentDefinition } from '../../../src/components/types.js';
import { applyComponent } from '../../../src/kube/apply.js';
import { KubeClient } from '../../../src/kube/client.js';
import { kubeconfigFromSpec } from '../../../src/kube/kubeconfig.js';
import { type TestEmulator } from '../../harness/emulator.js';
import { describeUpstream, fetchPinned } from '../../harness/upstream/index.js';
import {
  bootTwinCluster,
  describeTwin,
  isReady,
  kubeClient,
  nodesOf,
  waitFor,
  type ClusterFixture,
} from './helpers.js';

const NAME = 'comps';
const UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';

describeTwin('Kubernetes twin: loko components with the CCM and CNI gates on', () => {
  describeUpstream(
    'pinned flannel and MetalLB manifests',
    [FLANNEL_MANIFEST, METALLB_MANIFEST],
    () => {
      let dir: string;
      let emu: TestEmulator;
      let fx: ClusterFixture;
      let kube: KubeClient;
      let ctx: ComponentContext;
      const lines: string[] = [];
      const client = () => kubeClient(fx);

      beforeAll(async () => {
        ({ dir, emu, fx } = await bootTwinCluster({
          prefix: 'loko-twin-comps-',
          name: NAME,
          controllers: 1,
          workers: 1,
          gates: { requireCcm: true, requireCni: true },
          log: lines,
        }));
        await waitFor('both nodes registered', async () => {
          const nodes = await nodesOf(client()).catch(() => undefined);
          return nodes?.size === 2;
        });
        kube = new KubeClient(
          kubeconfigFromSpec({
            server: `https://${fx.eip}:6443`,
            caPem: fx.pki.ca.certPem,
            user: {
              clientCertificatePem: fx.pki.admin.certPem,
              clientKeyPem: fx.pki.admin.key.reveal(),
            },
          }),
        );
        // The cluster's API key, as loko creates it.
        const key = await emu.api('POST', `/projects/${emu.projectId}/api-keys`, {
          description: `loko:cluster=${NAME}`,
          read_only: false,
        });
        expect(key.status).toBe(201);
        ctx = {
          clusterName: NAME,
          projectId: emu.projectId,
          metro: 'sv',
          podCidr: fx.bootstrap.podSubnet,
          controlPlaneEndpoint: {
            address: fx.eip,
            port: 6443,
            eipTag: `loko:control-plane-endpoint=${NAME}`,
          },
          metalApiKey: key.body.token as string,
          upstream: (await fetchPinned([FLANNEL_MANIFEST, METALLB_MANIFEST])).upstream,
          components: new Set(['cloud-provider-equinix-metal', 'flannel', 'metallb']),
        };
      }, 300_000);

      afterAll(async () => {
        await emu?.close();
        if (dir) await rm(dir, { recursive: true, force: true });
        if (fx) await rm(fx.assetDir, { recursive: true, force: true });
      });

      function apply<C>(def: ComponentDefinition<C>, config: C) {
        return applyComponent(kube, def.name, def.render(config, ctx));
      }

      it('the CCM component initialises the nodes with the cluster API key', async () => {
        const before = await nodesOf(client());
        for (const n of before.values()) {
          expect((n.spec.taints ?? []).map((t) => t.key)).toContain(UNINITIALIZED);
        }
        await apply(cpem, {
          image: 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1',
          logLevel: 2,
        });
        const nodes = await waitFor('both nodes initialised', async () => {
          const got = await nodesOf(client());
          return [...got.values()].every((n) => n.spec.providerID) ? got : undefined;
        });
        for (const n of nodes.values()) {
          expect(n.spec.providerID).toMatch(/^equinixmetal:\/\//);
          expect((n.spec.taints ?? []).map((t) => t.key)).not.toContain(UNINITIALIZED);
          expect(n.metadata.labels['topology.kubernetes.io/region']).toBe('sv');
        }
        expect(lines.join('\n')).not.toContain(ctx.metalApiKey);
      });

      it('the flannel component makes them Ready', async () => {
        await apply(flannel, {});
        await waitFor('both nodes Ready', async () => {
          const got = await nodesOf(client());
          return [...got.values()].every(isReady);
        });
      });

      it('MetalLB passes its readiness check and its pool goes through the webhook stand-in', async () => {
        // Every node of the fixture is tainted (controller by kubeadm, the pool by its config).
        const config: MetallbConfig = {
          addressPools: [{ name: 'default', addresses: ['192.0.2.0/28'] }],
          controllerNodeSelectors: {},
          speakerNodeSelectors: {},
          controllerTolerations: [{ operator: 'Exists' }],
          speakerTolerations: [],
        };
        const objects = metallb.render(config, ctx);
        const groups = metallb.customResourceGroups ?? [];
        const isCustom = (o: { apiVersion: string }) =>
          groups.includes(o.apiVersion.split('/')[0]!);
        await applyComponent(
          kube,
          'metallb',
          objects.filter((o) => !isCustom(o)),
          { prune: false },
        );
        for (const check of metallb.ready ?? []) {
          await check.wait({ client: kube, timeoutMs: 120_000 });
        }
        const result = await applyComponent(kube, 'metallb', objects);
        const pool = result.applied.find((a) => a.ref.kind === 'IPAddressPool');
        expect(pool?.action).toBe('created');
        const vwc = await client().get(
          '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/metallb-webhook-configuration',
        );
        expect(
          vwc.body.webhooks.every(
            (w: { clientConfig: { caBundle?: string } }) => w.clientConfig.caBundle,
          ),
        ).toBe(true);
      });
    },
  );
});
