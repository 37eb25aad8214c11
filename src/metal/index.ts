/** The typed Equinix Metal API client (DESIGN.md §4). */
export type { MetalApi } from './api.js';
export { MetalClient, createMetalClient } from './client.js';
export { MetalApiError, MetalTransportError, isAbortError } from './errors.js';
export { resolveMetalEndpoint, missingEndpointError, validateMetalUrl } from './endpoint.js';
export type { MetalEndpoint } from './endpoint.js';
export { MetalTransport, PER_PAGE } from './transport.js';
export type {
  HttpMethod,
  MetalClientOptions,
  MetalLogger,
  MetalResponse,
  QueryValue,
  RequestSpec,
} from './transport.js';
export { TokenBucket } from './rate-limit.js';
export type * from './types.js';
export { apiKeysApi, createProjectApiKey, deleteApiKey, listProjectApiKeys } from './api-keys.js';
export type { ApiKeysApi, AuthToken, AuthTokenInput } from './api-keys.js';
export { updateIPTags } from './ip-update.js';
