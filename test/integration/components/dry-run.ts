/**
 * Server-side dry-run of a component's rendered objects on the harness apiserver: Namespaces and
 * CRDs are applied for real first (dry-run objects need their namespace, custom resources their
 * CRD), everything else is sent with `dryRun` and strict field validation. Objects carry the
 * labels `applyComponent` adds. Real CRDs and Namespaces use the field manager
 * `loko-test-harness`, so they never fight other suites' applies of the same objects.
 */
import { applyObjects } from '../../../src/kube/apply.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { withComponentLabels, type KubeObject } from '../../../src/kube/objects.js';

/** One object the dry run refused, and why. */
export interface DryRunFailure {
  object: string;
  error: string;
}

const isFoundation = (o: KubeObject) =>
  o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition';

/** Applies the foundation for real, dry-runs the rest; returns what was dry-run and what failed. */
export async function dryRunComponent(
  client: KubeClient,
  component: string,
  objects: KubeObject[],
): Promise<{ dryRun: string[]; failures: DryRunFailure[] }> {
  const foundation = objects.filter(isFoundation);
  await applyObjects(client, foundation, { fieldManager: 'loko-test-harness' });
  client.forgetDiscovery();
  const dryRun: string[] = [];
  const failures: DryRunFailure[] = [];
  for (const o of objects.filter((x) => !isFoundation(x))) {
    const id = `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
    try {
      const out = await client.apply(withComponentLabels(o, component), {
        dryRun: true,
        fieldValidation: 'Strict',
      });
      if (out.kind !== o.kind || out.metadata.name !== o.metadata.name) {
        failures.push({ object: id, error: `dry run answered ${out.kind} ${out.metadata.name}` });
      }
      dryRun.push(id);
    } catch (err) {
      failures.push({ object: id, error: (err as Error).message });
    }
  }
  return { dryRun, failures };
}
