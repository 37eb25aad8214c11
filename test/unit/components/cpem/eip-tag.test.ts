/**
 * CPEM's `eipTag`: new control-plane reservations carry `loko:control-plane-endpoint=<cluster>`,
 * found reservations that lack it are planned for a retag (never a second reservation), and the
 * tag is unique to the cluster.
 */
import { describe, expect, it } from 'vitest';
import {
  controlPlaneEipTag,
  describeTagIPMutation,
  endpointChanges,
  endpointTags,
  isEndpointReservation,
  missingEndpointTags,
  planEndpoint,
} from '../../../../src/platforms/equinixmetal/endpoint.js';
import type { DesiredState } from '../../../../src/platforms/equinixmetal/desired.js';
import type { IPReservation } from '../../../../src/metal/types.js';

function reservation(tags: string[]): IPReservation {
  return {
    id: 'r1',
    type: 'public_ipv4',
    address_family: 4,
    address: '147.75.1.1',
    network: '147.75.1.1',
    cidr: 32,
    public: true,
    management: false,
    state: 'created',
    tags,
    metro: { code: 'sv' },
    assignments: [],
  } as unknown as IPReservation;
}

const desired = { clusterName: 'demo', endpointMetro: 'sv' } as DesiredState;
const devices = { keptControllers: new Map(), hostnames: new Map() };

describe('control-plane EIP tag (CPEM eipTag)', () => {
  it('is loko:control-plane-endpoint=<cluster>, on every new reservation, distinct per cluster', () => {
    expect(controlPlaneEipTag('demo')).toBe('loko:control-plane-endpoint=demo');
    expect(endpointTags('demo')).toEqual([
      'loko:cluster=demo',
      'loko:role=control-plane-endpoint',
      'loko:control-plane-endpoint=demo',
    ]);
    expect(controlPlaneEipTag('demo')).not.toBe(controlPlaneEipTag('demo2'));
    expect(endpointTags('demo2')).not.toContain(controlPlaneEipTag('demo'));
  });

  it('a reservation made before the tag existed is still the endpoint, planned for a retag', () => {
    const legacy = reservation(['loko:cluster=demo', 'loko:role=control-plane-endpoint', 'x:y']);
    expect(isEndpointReservation(legacy, 'demo')).toBe(true);
    expect(missingEndpointTags(legacy, 'demo')).toEqual([
      'loko:cluster=demo',
      'loko:role=control-plane-endpoint',
      'x:y',
      'loko:control-plane-endpoint=demo',
    ]);
    const plan = planEndpoint(desired, [legacy], devices);
    expect(plan.reserve).toBe(false);
    expect(plan.retag).toEqual({ id: 'r1', tags: missingEndpointTags(legacy, 'demo') });
    expect(endpointChanges(plan)).toBe(true);
    expect(
      describeTagIPMutation({
        kind: 'tag-ip',
        id: 'r1',
        tags: plan.retag!.tags,
        label: '147.75.1.1/32',
      }),
    ).toContain('loko:control-plane-endpoint=demo');
  });

  it('a reservation with all tags needs no retag', () => {
    const r = reservation(endpointTags('demo'));
    expect(missingEndpointTags(r, 'demo')).toBeUndefined();
    expect(planEndpoint(desired, [r], devices).retag).toBeUndefined();
  });
});
