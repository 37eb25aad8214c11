import { describe, expect, it } from 'vitest';
import { rolloutStatus, type KubeObject } from '../../../src/kube/index.js';

const obj = (kind: string, generation: number, spec: object, status: object): KubeObject => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name: 'x', namespace: 'ns', generation },
  spec,
  status,
});

describe('rolloutStatus: Deployment', () => {
  const dep = (status: object, spec: object = { replicas: 3 }, generation = 2) =>
    rolloutStatus(obj('Deployment', generation, spec, status));

  it('waits for the controller to observe the generation', () => {
    expect(
      dep({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
    ).toEqual({
      done: false,
      message: 'waiting for the controller to observe generation 2 (at 1)',
    });
    expect(dep({})).toMatchObject({ done: false, message: expect.stringContaining('(at none)') });
  });

  it('waits for updated, then old replicas gone, then availability', () => {
    expect(
      dep({ observedGeneration: 2, replicas: 4, updatedReplicas: 2, availableReplicas: 3 }),
    ).toMatchObject({
      done: false,
      message: '2 of 3 new replicas have been updated',
    });
    expect(
      dep({ observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }),
    ).toMatchObject({
      done: false,
      message: '1 old replicas are pending termination',
    });
    expect(
      dep({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
    ).toMatchObject({
      done: false,
      message: '1 of 3 updated replicas are available',
    });
    expect(
      dep({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
    ).toEqual({
      done: true,
      message: '3 of 3 replicas updated and available',
    });
  });

  it('defaults replicas to 1 and treats 0 replicas as done', () => {
    expect(
      dep({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }, {}),
    ).toMatchObject({
      done: true,
    });
    expect(dep({ observedGeneration: 2 }, { replicas: 0 })).toMatchObject({ done: true });
  });

  it('fails on ProgressDeadlineExceeded', () => {
    const s = dep({
      observedGeneration: 2,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "x-1" has timed out progressing.',
        },
      ],
    });
    expect(s.done).toBe(false);
    expect(s.failed).toBe('ProgressDeadlineExceeded: ReplicaSet "x-1" has timed out progressing.');
  });
});

describe('rolloutStatus: DaemonSet', () => {
  const ds = (status: object, spec: object = {}) =>
    rolloutStatus(obj('DaemonSet', 1, spec, status));
  it('counts scheduled, updated and available pods', () => {
    expect(
      ds({
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 2,
        numberAvailable: 2,
      }),
    ).toMatchObject({
      done: false,
      message: '2 of 3 updated pods are scheduled',
    });
    expect(
      ds({
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 2,
      }),
    ).toMatchObject({
      done: false,
      message: '2 of 3 updated pods are available',
    });
    expect(
      ds({
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      }),
    ).toMatchObject({
      done: true,
    });
  });
  it('does not wait for an OnDelete DaemonSet', () => {
    expect(ds({}, { updateStrategy: { type: 'OnDelete' } })).toMatchObject({ done: true });
  });
});

describe('rolloutStatus: StatefulSet', () => {
  const sts = (status: object, spec: object = { replicas: 2 }) =>
    rolloutStatus(obj('StatefulSet', 1, spec, status));
  it('waits for ready, available and the update revision', () => {
    expect(sts({ observedGeneration: 1, readyReplicas: 1 })).toMatchObject({
      done: false,
      message: '1 of 2 pods are ready',
    });
    expect(sts({ observedGeneration: 1, readyReplicas: 2, availableReplicas: 1 })).toMatchObject({
      done: false,
      message: '1 of 2 pods are available',
    });
    expect(
      sts({
        observedGeneration: 1,
        readyReplicas: 2,
        availableReplicas: 2,
        updatedReplicas: 1,
        currentRevision: 'a',
        updateRevision: 'b',
      }),
    ).toMatchObject({ done: false, message: '1 of 2 pods updated to revision b' });
    expect(
      sts({
        observedGeneration: 1,
        readyReplicas: 2,
        availableReplicas: 2,
        updatedReplicas: 2,
        currentRevision: 'b',
        updateRevision: 'b',
      }),
    ).toMatchObject({ done: true });
  });
  it('honours a partition', () => {
    const spec = {
      replicas: 3,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
    };
    expect(
      sts(
        {
          observedGeneration: 1,
          readyReplicas: 3,
          updatedReplicas: 0,
          currentRevision: 'a',
          updateRevision: 'b',
        },
        spec,
      ),
    ).toMatchObject({
      done: false,
      message: '0 of 1 pods above the partition updated',
    });
    expect(
      sts(
        {
          observedGeneration: 1,
          readyReplicas: 3,
          updatedReplicas: 1,
          currentRevision: 'a',
          updateRevision: 'b',
        },
        spec,
      ),
    ).toMatchObject({
      done: true,
    });
  });
});

it('refuses kinds without rollouts', () => {
  expect(() => rolloutStatus(obj('ConfigMap', 1, {}, {}))).toThrow(
    /no rollout to wait for on kind ConfigMap/,
  );
});
