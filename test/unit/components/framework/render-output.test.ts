import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets, renderYaml } from '../../../../src/components/render-output.js';
import type { KubeObject } from '../../../../src/kube/objects.js';

const secret: KubeObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'kube-system' },
  type: 'Opaque',
  data: { 'cloud-sa.json': Buffer.from('{"apiKey":"s3cr3t"}').toString('base64') },
  stringData: { token: 's3cr3t-token' },
};
const configMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cfg', namespace: 'kube-system' },
  data: { long: 'x'.repeat(200), multi: 'a\nb\n' },
};
// Same kind name in another group: not a core Secret, left alone.
const other: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Secret',
  metadata: { name: 'x' },
  data: { keep: 'visible' },
};

describe('renderYaml', () => {
  it('redacts every Secret value (data and stringData), keeps the keys', () => {
    const text = renderYaml([secret, configMap, other]);
    expect(text).not.toContain('s3cr3t');
    expect(text).not.toContain(
      secret.data ? (secret.data as Record<string, string>)['cloud-sa.json'] : '',
    );
    const docs = parseAllDocuments(text).map((d) => d.toJS() as KubeObject);
    expect(docs).toHaveLength(3);
    expect(docs[0]!.data).toEqual({ 'cloud-sa.json': REDACTED });
    expect(docs[0]!.stringData).toEqual({ token: REDACTED });
    expect(docs[0]!.type).toBe('Opaque');
    expect(docs[1]).toEqual(configMap);
    expect(docs[2]).toEqual(other);
  });

  it('shows the values with showSecrets, and round-trips every object exactly', () => {
    const text = renderYaml([secret, configMap], { showSecrets: true });
    expect(parseAllDocuments(text).map((d) => d.toJS())).toEqual([secret, configMap]);
    expect(text.startsWith('---\n')).toBe(true);
    // Long strings stay on one line (no folding), so the output is greppable.
    expect(text).toContain(`long: ${'x'.repeat(200)}\n`);
  });

  it('redactSecrets does not change its input', () => {
    const copy = structuredClone(secret);
    redactSecrets(secret);
    expect(secret).toEqual(copy);
  });
});
