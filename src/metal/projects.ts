/** Projects (reference/metal-api.md §2). */
import type { MetalTransport } from './transport.js';
import type { IncludeOptions, Project } from './types.js';
import { seg } from './util.js';

/** `GET /projects/{id}` → Project. */
export function getProject(
  t: MetalTransport,
  projectId: string,
  opts: IncludeOptions = {},
): Promise<Project> {
  return t.json<Project>({ method: 'GET', path: `/projects/${seg(projectId)}`, ...opts });
}

/** `GET /projects` (paginated `{projects, meta}`) → every project the key can see. */
export function listProjects(t: MetalTransport, opts: IncludeOptions = {}): Promise<Project[]> {
  return t.list<Project>({ path: '/projects', ...opts }, 'projects');
}
