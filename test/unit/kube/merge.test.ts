/** Merging loko's kubeconfig into the user's: the conflict policies, never a silent overwrite. */
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  KubeconfigConflictError,
  KubeconfigError,
  mergeKubeconfig,
  renderKubeconfig,
} from '../../../src/kube/index.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const ours = renderKubeconfig({
  server: 'https://127.5.192.0:6443',
  caPem: CA,
  user: { clientCertificatePem: 'cert', clientKeyPem: 'key' },
  clusterName: 'demo',
  userName: 'demo-admin',
  contextName: 'demo-admin@demo',
});
/** The same names, another cluster (a destroyed and re-created one, or a namesake). */
const other = ours.replace('127.5.192.0', '127.9.192.0');

const theirs = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example.com
users:
- name: alice
  user:
    token: t
contexts:
- name: alice@prod
  context:
    cluster: prod
    user: alice
current-context: alice@prod
`;

type Doc = {
  clusters: Array<{ name: string; cluster: { server: string } }>;
  users: Array<{ name: string }>;
  contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
  'current-context': string;
};
const doc = (text: string) => parse(text) as Doc;

describe('mergeKubeconfig', () => {
  it('into no file: a kubeconfig of its own, current context set', () => {
    const r = mergeKubeconfig(undefined, ours, 'fail');
    expect(doc(r.text)['current-context']).toBe('demo-admin@demo');
    expect(r.changes.map((c) => `${c.kind} ${c.name} ${c.action}`)).toEqual([
      'cluster demo added',
      'user demo-admin added',
      'context demo-admin@demo added',
    ]);
  });

  it('adds next to existing entries and keeps their current context', () => {
    const r = mergeKubeconfig(theirs, ours, 'fail');
    const d = doc(r.text);
    expect(d.clusters.map((c) => c.name)).toEqual(['prod', 'demo']);
    expect(d.contexts.map((c) => c.name)).toEqual(['alice@prod', 'demo-admin@demo']);
    expect(d['current-context']).toBe('alice@prod');
    expect(r.currentContext).toBe('alice@prod');
    expect(r.context).toBe('demo-admin@demo');
  });

  it('merging the same kubeconfig again changes nothing', () => {
    const once = mergeKubeconfig(theirs, ours, 'fail').text;
    const twice = mergeKubeconfig(once, ours, 'fail');
    expect(twice.changes.every((c) => c.action === 'unchanged')).toBe(true);
    expect(twice.text).toBe(once);
  });

  it('fail (the default policy): names every conflicting entry and writes nothing', () => {
    const base = mergeKubeconfig(theirs, ours, 'fail').text;
    const ctxOnly = base.replace('user: demo-admin\n', 'user: alice\n');
    let err: unknown;
    try {
      mergeKubeconfig(ctxOnly, other, 'fail', '/home/me/.kube/config');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KubeconfigConflictError);
    expect((err as KubeconfigConflictError).conflicts).toEqual([
      { kind: 'cluster', name: 'demo' },
      { kind: 'context', name: 'demo-admin@demo' },
    ]);
    expect((err as Error).message).toBe(
      'kubeconfig /home/me/.kube/config: already has cluster "demo", context "demo-admin@demo" with different content',
    );
  });

  it('rename: ours get free names and the context points at them; theirs are untouched', () => {
    const base = mergeKubeconfig(theirs, ours, 'fail').text;
    const r = mergeKubeconfig(base, other, 'rename');
    const d = doc(r.text);
    expect(r.changes.map((c) => `${c.kind} ${c.from ?? ''}->${c.name} ${c.action}`)).toEqual([
      'cluster demo->demo-2 renamed',
      'user ->demo-admin unchanged',
      'context demo-admin@demo->demo-admin@demo-2 renamed',
    ]);
    expect(d.clusters.find((c) => c.name === 'demo')!.cluster.server).toBe(
      'https://127.5.192.0:6443',
    );
    expect(d.contexts.find((c) => c.name === 'demo-admin@demo-2')!.context).toEqual({
      cluster: 'demo-2',
      user: 'demo-admin',
    });
    expect(r.context).toBe('demo-admin@demo-2');
    // The same rename merge again adds nothing.
    const again = mergeKubeconfig(r.text, other, 'rename');
    expect(again.text).toBe(r.text);
  });

  it('overwrite: ours replace the entries of the same name, nothing else changes', () => {
    const base = mergeKubeconfig(theirs, ours, 'fail').text;
    const r = mergeKubeconfig(base, other, 'overwrite');
    const d = doc(r.text);
    expect(d.clusters.map((c) => [c.name, c.cluster.server])).toEqual([
      ['prod', 'https://prod.example.com'],
      ['demo', 'https://127.9.192.0:6443'],
    ]);
    expect(r.changes.filter((c) => c.action === 'replaced').map((c) => c.name)).toEqual(['demo']);
    expect(d['current-context']).toBe('alice@prod');
  });

  it('refuses what is not a kubeconfig', () => {
    expect(() => mergeKubeconfig('- a\n- b\n', ours, 'fail')).toThrow(KubeconfigError);
    expect(() => mergeKubeconfig('clusters: 3\n', ours, 'fail')).toThrow(/not a list/);
    expect(() => mergeKubeconfig(theirs, '', 'fail')).toThrow(/empty/);
  });
});
