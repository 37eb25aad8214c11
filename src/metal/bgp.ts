/** Project BGP configuration (reference/metal-api.md §2). */
import type { MetalTransport } from './transport.js';
import type { BgpConfig, BgpConfigRequestInput } from './types.js';
import { seg } from './util.js';

/**
 * `GET /projects/{id}/bgp-config` (singular) → BgpConfig; `{}` when BGP was never enabled (test
 * `status`/`deployment_type` to know whether it is).
 */
export async function getBgpConfig(t: MetalTransport, projectId: string): Promise<BgpConfig> {
  const res = await t.request<BgpConfig>({
    method: 'GET',
    path: `/projects/${seg(projectId)}/bgp-config`,
  });
  return res.body ?? {};
}

/**
 * `POST /projects/{id}/bgp-configs` (plural, BgpConfigRequestInput) → 204. Not idempotent: the
 * API rejects a second request, so callers read `getBgpConfig` first.
 */
export async function requestBgpConfig(
  t: MetalTransport,
  projectId: string,
  input: BgpConfigRequestInput,
): Promise<void> {
  await t.request({
    method: 'POST',
    path: `/projects/${seg(projectId)}/bgp-configs`,
    body: input,
  });
}
