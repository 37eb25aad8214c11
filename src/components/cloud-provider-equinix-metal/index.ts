/**
 * The `cloud-provider-equinix-metal` bootstrap component: CPEM v3.8.1, the Equinix Metal cloud
 * controller manager (cpem.md). Kubelets run with `--cloud-provider=external`, so nodes stay
 * tainted `uninitialized` until CPEM sets their providerID, addresses and labels; it also keeps the
 * control-plane Elastic IP (found by `eipTag`) on a healthy controller. Installed by every
 * `cluster apply` right after nodes register (DESIGN.md; Lokomotive installed its packet-ccm at
 * bootstrap for the same reason, lokomotive.md §3).
 */
import type { ComponentDefinition } from '../types.js';
import { CPEM_NAME, CPEM_SPEC, decodeCpemConfig, type CpemConfig } from './config.js';
import { CPEM_NAMESPACE } from './rbac.js';
import { renderCpem } from './render.js';

export type { CpemConfig } from './config.js';

/** The component definition the registry lists. */
export const cloudProviderEquinixMetal: ComponentDefinition<CpemConfig> = {
  name: CPEM_NAME,
  description:
    'Equinix Metal cloud controller manager (CPEM v3.8.1): node initialisation, control-plane Elastic IP, LoadBalancer Elastic IPs',
  namespace: CPEM_NAMESPACE,
  bootstrap: true,
  dependsOn: [],
  spec: CPEM_SPEC,
  decode: decodeCpemConfig,
  upstream: [],
  render: renderCpem,
};
