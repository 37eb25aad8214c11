import { describe, expect, it } from 'vitest';
import { applyComponents } from '../../../../src/components/apply.js';
import { deleteComponents } from '../../../../src/components/delete.js';
import type { ConfiguredComponent } from '../../../../src/components/resolve.js';
import type { ComponentDefinition } from '../../../../src/components/types.js';
import type { KubeClient } from '../../../../src/kube/client.js';
import { InterruptedError } from '../../../../src/util/errors.js';
import { fakeComponent } from './fake.js';

/** A client whose every call aborts `controller` and then fails like a cut request. */
function cutClient(controller: AbortController): KubeClient {
  const fail = async (): Promise<never> => {
    controller.abort();
    throw new Error('This operation was aborted');
  };
  return {
    server: 'https://127.0.0.1:1',
    get: fail,
    apply: fail,
    list: fail,
    delete: fail,
    resourceInfo: fail,
    forgetDiscovery: () => {},
  } as unknown as KubeClient;
}

const set: ConfiguredComponent[] = [
  {
    def: fakeComponent({ name: 'cut' }) as ComponentDefinition,
    config: { replicas: 1, greeting: 'hi', pools: [] },
    configured: true,
  },
];

describe('Ctrl-C during a component apply or delete', () => {
  it('apply reports InterruptedError, not the transport error', async () => {
    const controller = new AbortController();
    await expect(
      applyComponents(
        cutClient(controller),
        set,
        { upstream: new Map(), components: new Set() },
        {
          signal: controller.signal,
          skipDependencyCheck: true,
        },
      ),
    ).rejects.toBeInstanceOf(InterruptedError);
  });

  it('delete reports InterruptedError too', async () => {
    const controller = new AbortController();
    await expect(
      deleteComponents(cutClient(controller), set, { signal: controller.signal }),
    ).rejects.toBeInstanceOf(InterruptedError);
  });

  it('without an abort, a failure names the component', async () => {
    const client = {
      get: async () => {
        throw new Error('boom');
      },
    } as unknown as KubeClient;
    await expect(
      applyComponents(
        client,
        set,
        { upstream: new Map(), components: new Set() },
        {
          skipDependencyCheck: true,
        },
      ),
    ).rejects.toThrow('component "cut": boom');
  });
});
