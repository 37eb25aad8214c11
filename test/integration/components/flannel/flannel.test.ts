/**
 * flannel's rendered objects (from the pinned manifest fetched through the real fetch code) pass
 * a server-side dry-run on the harness apiserver, with the pod CIDR in net-conf.json.
 */
import { expect, it } from 'vitest';
import { FLANNEL_MANIFEST, flannel } from '../../../../src/components/flannel/index.js';
import { describeKube, useKube } from '../../../harness/kube/index.js';
import { describeUpstream, fetchPinned } from '../../../harness/upstream/index.js';
import { dryRunComponent } from '../dry-run.js';

describeKube('flannel on the real apiserver', () => {
  const kube = useKube();

  describeUpstream('pinned kube-flannel.yml', [FLANNEL_MANIFEST], () => {
    it('every rendered object passes a server-side dry-run', async () => {
      const { upstream } = await fetchPinned(flannel.upstream);
      const objects = flannel.render(
        { vxlanPort: 4789 },
        { upstream, components: new Set(['flannel']), podCidr: '10.2.0.0/16' },
      );
      const { dryRun, failures } = await dryRunComponent(kube().client, 'flannel', objects);
      expect(failures).toEqual([]);
      expect(dryRun).toEqual([
        'ClusterRole flannel',
        'ClusterRoleBinding flannel',
        'ServiceAccount kube-flannel/flannel',
        'ConfigMap kube-flannel/kube-flannel-cfg',
        'DaemonSet kube-flannel/kube-flannel-ds',
      ]);
      const cm = objects.find((o) => o.kind === 'ConfigMap')!;
      expect(JSON.parse((cm.data as Record<string, string>)['net-conf.json']!)).toMatchObject({
        Network: '10.2.0.0/16',
        Backend: { Type: 'vxlan', Port: 4789 },
      });
    });
  });
});
