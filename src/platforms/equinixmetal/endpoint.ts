/**
 * The control-plane endpoint: one `public_ipv4` Elastic IP (a /32) per cluster, reserved in the
 * cluster's metro before any device exists and assigned to controller 0. It is kubeadm's
 * `controlPlaneEndpoint`, a SAN of every apiserver certificate and the kubeconfig's server, so it
 * never changes for the life of the cluster. Found by its tags (DESIGN.md §3); never reserved twice.
 *
 * Planning is pure ({@link planEndpoint}); apply performs the plan through the executor.
 */
import type { Href, IPAssignment, IPReservation } from '../../metal/types.js';
import { LokoError } from '../../util/errors.js';
import type { DesiredState } from './desired.js';
import { clusterTag, controllerHostname } from './tags.js';

/** The role tag of the endpoint reservation (with the cluster tag). */
export const ENDPOINT_ROLE_TAG = 'loko:role=control-plane-endpoint';

/** The port the Kubernetes API serves on at the endpoint. */
export const ENDPOINT_PORT = 6443;

/**
 * The tag that marks the reservation as the control-plane endpoint of `clusterName` alone:
 * `loko:control-plane-endpoint=<cluster>`. CPEM's `eipTag` (cpem.md §5.6) finds the EIP it keeps
 * on a healthy controller by one tag (`ipReservationByAllTags([eipTag])`), so that tag must be on
 * no other reservation of the project; the cluster tag is on every reservation of the cluster and
 * the role tag on the endpoint of every cluster, so neither alone will do.
 */
export function controlPlaneEipTag(clusterName: string): string {
  return `loko:control-plane-endpoint=${clusterName}`;
}

/**
 * Tags a new endpoint reservation of `clusterName` gets: the cluster tag, the role tag and
 * {@link controlPlaneEipTag}.
 */
export function endpointTags(clusterName: string): string[] {
  return [...endpointFindTags(clusterName), controlPlaneEipTag(clusterName)];
}

/**
 * Tags that identify the endpoint reservation of `clusterName` (cluster + role). Finding does not
 * require {@link controlPlaneEipTag}: reservations made before it existed lack it, and apply adds
 * it (see {@link EndpointPlan.retag}) instead of reserving a second address.
 */
export function endpointFindTags(clusterName: string): string[] {
  return [clusterTag(clusterName), ENDPOINT_ROLE_TAG];
}

/** True when `r` carries the cluster's endpoint find tags ({@link endpointFindTags}). */
export function isEndpointReservation(r: IPReservation, clusterName: string): boolean {
  const tags = r.tags ?? [];
  return endpointFindTags(clusterName).every((t) => tags.includes(t));
}

/**
 * The full tag list the reservation `r` must carry when it lacks some of
 * {@link endpointTags} (its own tags first, then the missing ones); undefined when complete.
 * `PATCH /ips/{id}` replaces the whole `tags` array, so the existing tags are kept in it.
 */
export function missingEndpointTags(r: IPReservation, clusterName: string): string[] | undefined {
  const have = r.tags ?? [];
  const missing = endpointTags(clusterName).filter((t) => !have.includes(t));
  return missing.length > 0 ? [...have, ...missing] : undefined;
}

/** `https://<address>:6443`. */
export function endpointUrl(address: string): string {
  return `https://${address}:${ENDPOINT_PORT}`;
}

/** The reservation's address: a /32 is its network address. */
export function reservationAddress(r: IPReservation): string {
  return r.address ?? r.network;
}

/** What the endpoint needs; computed by {@link planEndpoint}. */
export interface EndpointPlan {
  /** The reservation found by tag; absent when it must be reserved. */
  reservation?: { id: string; address: string };
  /** True when no reservation carries the tags: reserve one (a /32 in `metro`). */
  reserve: boolean;
  metro: string;
  /** Assignments of the address to remove first (a device being replaced or removed, ...). */
  unassign: Array<{ id: string; from: string }>;
  /**
   * Assign the address to this controller (controller 0). `deviceId` is absent when the device is
   * created by this apply; apply then takes it from the created device.
   */
  assign?: { hostname: string; deviceId?: string };
  /** The controller that holds the address already (nothing to do). */
  heldBy?: string;
  /**
   * The found reservation lacks some of {@link endpointTags} (reserved before
   * {@link controlPlaneEipTag} existed): set its tags to this full list (`PATCH /ips/{id}`).
   */
  retag?: { id: string; tags: string[] };
}

/**
 * `PATCH /ips/{id} {tags}`: gives an existing endpoint reservation the tags it lacks (the whole
 * list: the API replaces it). Idempotent, so resending after an uncertain answer is safe.
 */
export interface TagIPMutation {
  kind: 'tag-ip';
  id: string;
  tags: string[];
  /** e.g. `147.75.1.1/32`, for messages. */
  label: string;
}

/** One line describing a {@link TagIPMutation}. */
export function describeTagIPMutation(m: TagIPMutation): string {
  return `tag the control-plane Elastic IP ${m.label} (${m.tags.join(', ')})`;
}

/** True when the endpoint plan changes something. */
export function endpointChanges(p: EndpointPlan | undefined): boolean {
  return (
    !!p && (p.reserve || p.assign !== undefined || p.unassign.length > 0 || p.retag !== undefined)
  );
}

/** The device-side facts {@link planEndpoint} needs from the device plan. */
export interface EndpointDevices {
  /**
   * Controllers that keep their device in this apply (noop or tag update): device id -> hostname.
   * A device being replaced or deleted is not in it.
   */
  keptControllers: Map<string, string>;
  /** Every live device of the cluster: device id -> hostname (for messages). */
  hostnames: Map<string, string>;
}

/**
 * Plans the endpoint. `reservations` are the cluster's endpoint reservations (both tags), with
 * their assignments embedded (`include=assignments`).
 *
 * The address stays where it is when a controller the apply keeps holds it: the Equinix Metal
 * CCM moves the control-plane Elastic IP to a healthy controller, and apply must not move it
 * back. Otherwise stale assignments are removed and the address goes to controller 0.
 *
 * Throws LokoError when the reservation cannot serve: in another metro than the cluster, or not
 * yet approved.
 */
export function planEndpoint(
  desired: DesiredState,
  reservations: IPReservation[],
  devices: EndpointDevices,
): EndpointPlan {
  const metro = desired.endpointMetro;
  const c0 = controllerHostname(desired.clusterName, 0);
  const c0Id = [...devices.keptControllers].find(([, h]) => h === c0)?.[0];
  const assignC0 = { hostname: c0, ...(c0Id ? { deviceId: c0Id } : {}) };
  const r = chooseReservation(reservations);
  if (!r) return { reserve: true, metro, unassign: [], assign: assignC0 };

  const address = reservationAddress(r);
  const rMetro = reservationMetro(r);
  if (rMetro && rMetro !== metro) {
    throw new LokoError(
      `the control-plane Elastic IP ${address} (${r.id}) is in metro ${rMetro}, the cluster in ${metro}`,
      {
        hint:
          'The endpoint cannot move between metros: every machine and certificate of the cluster uses its address. ' +
          `Set the cluster's metro back to "${rMetro}", or destroy the cluster and create it again.`,
      },
    );
  }
  if (r.state && r.state !== 'created') {
    throw new LokoError(
      `the control-plane Elastic IP reservation ${r.id} is ${r.state}, so it cannot be assigned`,
      {
        hint:
          r.state === 'pending'
            ? 'Equinix Metal has to approve the request (the project is over its quota of public IPv4 addresses); run apply again once it is approved.'
            : 'Delete the reservation and run apply again to reserve a new one.',
      },
    );
  }
  const tags = missingEndpointTags(r, desired.clusterName);
  const base = {
    reservation: { id: r.id, address },
    reserve: false,
    metro,
    ...(tags ? { retag: { id: r.id, tags } } : {}),
  };
  const assignments = embeddedAssignments(r);
  const holder = assignments.find((a) => {
    const id = deviceIdOf(a);
    return id !== undefined && devices.keptControllers.has(id);
  });
  if (holder) {
    return { ...base, unassign: [], heldBy: devices.keptControllers.get(deviceIdOf(holder)!)! };
  }
  const unassign = assignments.map((a) => {
    const id = deviceIdOf(a);
    return { id: a.id, from: (id && devices.hostnames.get(id)) ?? id ?? 'unknown device' };
  });
  return { ...base, unassign, assign: assignC0 };
}

/**
 * Of several reservations with the endpoint tags (made by hand or by another tool), the one that
 * is assigned, else the oldest; loko never reserves a second one.
 */
export function chooseReservation(rs: IPReservation[]): IPReservation | undefined {
  return [...rs].sort(
    (a, b) =>
      Number(embeddedAssignments(b).length > 0) - Number(embeddedAssignments(a).length > 0) ||
      (a.created_at ?? '').localeCompare(b.created_at ?? '') ||
      a.id.localeCompare(b.id),
  )[0];
}

/** The assignments a reservation lists in full (`include=assignments`); hrefs are skipped. */
export function embeddedAssignments(r: IPReservation): IPAssignment[] {
  return (r.assignments ?? []).filter((a): a is IPAssignment => 'address' in a && 'id' in a);
}

/** The device an assignment belongs to, from `assigned_to.href` (`…/devices/<id>`). */
export function deviceIdOf(a: IPAssignment): string | undefined {
  const href = (a.assigned_to as Href | undefined)?.href;
  const m = href ? /\/devices\/([^/?#]+)/.exec(href) : null;
  return m?.[1];
}

function reservationMetro(r: IPReservation): string | undefined {
  const m = r.metro as { code?: string } | undefined;
  return typeof m?.code === 'string' ? m.code.toLowerCase() : undefined;
}
