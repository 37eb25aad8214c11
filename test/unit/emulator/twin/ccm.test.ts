/**
 * How the CCM gate finds the CCM's credentials in a pod spec (CPEM v3.8.1: `--cloud-config` file
 * from a Secret volume, env vars winning), and the node architecture from the plan.
 */
import { describe, expect, it } from 'vitest';
import {
  cloudConfigPath,
  isCcmContainer,
  secretKeyForFile,
} from '../../../../src/emulator/twin/ccm.js';
import { archOf, type PodView } from '../../../../src/emulator/twin/nodes.js';

type Container = NonNullable<NonNullable<PodView['spec']>['containers']>[number];

const container: Container = {
  name: 'cloud-provider-equinix-metal',
  image: 'quay.io/equinix-oss/cloud-provider-equinix-metal:v3.8.1',
  command: ['./cloud-provider-equinix-metal'],
  args: ['--cloud-provider=equinixmetal', '--cloud-config=/etc/cloud-sa/cloud-sa.json'],
  volumeMounts: [{ name: 'cloud-sa-volume', mountPath: '/etc/cloud-sa' }],
};
const pod = (volumes: NonNullable<PodView['spec']>['volumes'], c = container): PodView => ({
  metadata: { name: 'ccm', namespace: 'kube-system' },
  spec: { containers: [c], volumes },
});

describe('the CCM container and its config file', () => {
  it('is recognised by its flag or its image', () => {
    expect(isCcmContainer(container)).toBe(true);
    expect(
      isCcmContainer({ image: 'example/ccm:1', args: ['--cloud-provider', 'equinixmetal'] }),
    ).toBe(false);
    expect(
      isCcmContainer({ image: 'example/ccm:1', args: ['--cloud-provider=equinixmetal'] }),
    ).toBe(true);
    expect(isCcmContainer({ image: 'example/other:1' })).toBe(false);
  });

  it('reads --cloud-config in both spellings', () => {
    expect(cloudConfigPath(container)).toBe('/etc/cloud-sa/cloud-sa.json');
    expect(cloudConfigPath({ args: ['--cloud-config', '/c.json'] })).toBe('/c.json');
    expect(cloudConfigPath({ args: ['--v=2'] })).toBeUndefined();
  });

  it('maps the file to a Secret key through the mount, the volume and its items', () => {
    const file = '/etc/cloud-sa/cloud-sa.json';
    expect(
      secretKeyForFile(
        pod([{ name: 'cloud-sa-volume', secret: { secretName: 'metal-cloud-config' } }]),
        container,
        file,
      ),
    ).toEqual({ secret: 'metal-cloud-config', key: 'cloud-sa.json' });
    expect(
      secretKeyForFile(
        pod([
          {
            name: 'cloud-sa-volume',
            secret: { secretName: 's', items: [{ key: 'config', path: 'cloud-sa.json' }] },
          },
        ]),
        container,
        file,
      ),
    ).toEqual({ secret: 's', key: 'config' });
  });

  it('says why when the file comes from no Secret', () => {
    expect(secretKeyForFile(pod([]), container, '/elsewhere/x.json')).toEqual({
      error: 'no volume is mounted at /elsewhere/x.json',
    });
    expect(
      secretKeyForFile(
        pod([{ name: 'cloud-sa-volume', hostPath: { path: '/etc' } }]),
        container,
        '/etc/cloud-sa/cloud-sa.json',
      ),
    ).toEqual({ error: 'volume cloud-sa-volume mounted at /etc/cloud-sa is not a Secret volume' });
  });
});

it('archOf: Arm plans are arm64, the rest amd64', () => {
  expect(archOf('c3.small.x86')).toBe('amd64');
  expect(archOf('c3.large.arm64')).toBe('arm64');
});
