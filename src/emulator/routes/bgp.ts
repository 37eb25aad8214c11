import type { FastifyInstance } from 'fastify';
import { requireProject, type EmulatorContext } from '../context.js';
import { unprocessable } from '../errors.js';
import { newId } from '../ids.js';
import { renderBgpConfig } from '../render.js';
import { bodyObject, Fields } from '../validate.js';

type IdParams = { Params: { id: string } };

// BgpConfigRequestInput.md5: 10-20 letters and digits with at least one lower, upper and digit.
const MD5_RE = /^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[a-zA-Z\d]{10,20}$/;

/** Project BGP configuration: GET /projects/{id}/bgp-config, POST /projects/{id}/bgp-configs. */
export function registerBgpRoutes(api: FastifyInstance, ctx: EmulatorContext): void {
  api.get<IdParams>('/projects/:id/bgp-config', async (req) => {
    const project = requireProject(ctx, req.params.id);
    const config = ctx.state.bgpConfigs.find((c) => c.projectId === project.id);
    // The API answers an empty object when BGP was never enabled.
    return config ? renderBgpConfig(config) : {};
  });

  api.post<IdParams>('/projects/:id/bgp-configs', async (req, reply) => {
    const project = requireProject(ctx, req.params.id);
    const f = new Fields(bodyObject(req.body));
    const deploymentType = f.oneOf('deployment_type', ['local', 'global'] as const, {
      required: true,
    });
    const asn = f.int('asn', { required: true, min: 0, max: 4294967295 });
    const md5 = f.string('md5');
    f.string('use_case');
    if (md5 !== undefined && md5 !== '' && !MD5_RE.test(md5)) {
      f.add(
        'md5 must be 10-20 letters and digits, with at least one lowercase, one uppercase and one digit',
      );
    }
    f.check();
    // Not idempotent in the real API: once requested, the config cannot be requested again.
    if (ctx.state.bgpConfigs.some((c) => c.projectId === project.id)) {
      throw unprocessable('BGP has already been requested for this project');
    }
    ctx.state.bgpConfigs.push({
      id: newId(),
      projectId: project.id,
      deploymentType: deploymentType!,
      asn: asn!,
      md5: md5 ? md5 : null,
      status: deploymentType === 'local' ? 'enabled' : 'requested',
      createdAt: ctx.clock.now(),
    });
    ctx.changed();
    return reply.code(204).send();
  });
}
