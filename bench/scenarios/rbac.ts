// [rbac] RBAC authorization (issue 22): the in-process decision with 1,000 Roles and 5,000
// RoleBindings (plus 200 ClusterRoleBindings) in 100 namespaces, p99 ≤ 0.2 ms; and how long a
// RoleBinding created through the API takes to be visible to the authorizer, p99 ≤ 100 ms.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RbacAuthorizer } from '../../src/auth/rbac/authorizer.js';
import { RbacCache } from '../../src/auth/rbac/cache.js';
import { RbacRuleResolver } from '../../src/auth/rbac/resolver.js';
import type { AuthorizationAttributes } from '../../src/auth/authorizer.js';
import { createControlPlane } from '../../src/controlplane/controlplane.js';
import { memory } from '../../src/storage/factories.js';
import type { Scenario } from '../context.js';

const RBAC = 'rbac.authorization.k8s.io';
const RESOURCES = ['configmaps', 'secrets', 'pods', 'services', 'leases', 'events', 'serviceaccounts', 'deployments', 'jobs', 'widgets'];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** A cache shaped like a busy cluster: 100 namespaces × 10 Roles × 50 RoleBindings, 200 ClusterRoleBindings. */
function bigCache(): RbacCache {
  const cache = new RbacCache();
  for (let n = 0; n < 100; n++) {
    const ns = `ns-${n}`;
    for (let r = 0; r < 10; r++) {
      cache.upsert('Role', {
        metadata: { name: `role-${r}`, namespace: ns },
        rules: [
          { verbs: ['get', 'list', 'watch'], apiGroups: ['', 'apps'], resources: [RESOURCES[r]!, `${RESOURCES[r]!}/status`] },
          { verbs: ['update'], apiGroups: [''], resources: [RESOURCES[(r + 1) % 10]!], resourceNames: [`obj-${r}`] },
        ],
      });
    }
    for (let b = 0; b < 50; b++) {
      cache.upsert('RoleBinding', {
        metadata: { name: `rb-${b}`, namespace: ns },
        roleRef: { apiGroup: RBAC, kind: 'Role', name: `role-${b % 10}` },
        subjects: [
          { kind: 'User', apiGroup: RBAC, name: `user-${(n * 50 + b) % 2000}` },
          { kind: 'Group', apiGroup: RBAC, name: `group-${b % 40}` },
          { kind: 'ServiceAccount', name: `sa-${b}` },
        ],
      });
    }
  }
  cache.upsert('ClusterRole', { metadata: { name: 'reader' }, rules: [{ verbs: ['get'], apiGroups: ['*'], resources: ['namespaces'] }] });
  for (let c = 0; c < 200; c++) {
    cache.upsert('ClusterRoleBinding', {
      metadata: { name: `crb-${c}` },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'reader' },
      subjects: [{ kind: 'Group', apiGroup: RBAC, name: `team-${c}` }],
    });
  }
  return cache;
}

export const rbac: Scenario = {
  names: ['rbac'],
  async run(ctx) {
    const { rec, quick } = ctx;
    console.log('\n[rbac] RBAC decision with 1,000 Roles and 5,000 RoleBindings (in process); a new binding visible to the authorizer');
    const authorizer = new RbacAuthorizer(new RbacRuleResolver(bigCache()));
    const n = quick ? 50_000 : 300_000;
    const times = new Array<number>(n);
    let allowed = 0;
    const attrs: AuthorizationAttributes[] = [];
    const users: { name: string; groups: string[] }[] = [];
    for (let i = 0; i < 1000; i++) {
      attrs.push({
        isResourceRequest: true,
        path: '',
        verb: ['get', 'list', 'update', 'delete'][i % 4]!,
        apiGroup: '',
        apiVersion: 'v1',
        namespace: `ns-${(i * 7) % 100}`,
        resource: RESOURCES[i % 10]!,
        subresource: '',
        name: i % 4 === 2 ? `obj-${i % 10}` : '',
      });
      users.push(
        i % 3 === 2
          ? { name: `system:serviceaccount:ns-${(i * 7) % 100}:sa-${i % 50}`, groups: ['system:serviceaccounts', 'system:authenticated'] }
          : { name: `user-${i % 2000}`, groups: [`group-${i % 40}`, `team-${i % 200}`, 'system:authenticated'] },
      );
    }
    for (let i = 0; i < 20_000; i++) authorizer.authorize(users[i % 1000]!, attrs[(i * 13) % 1000]!); // warm-up
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const r = authorizer.authorize(users[i % 1000]!, attrs[(i * 13) % 1000]!);
      times[i] = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.decision === 'allow') allowed++;
    }
    times.sort((a, b) => a - b);
    const p50 = percentile(times, 50);
    const p99 = percentile(times, 99);
    console.log(
      `  decision: p50 ${(p50 * 1000).toFixed(1)} µs, p99 ${(p99 * 1000).toFixed(1)} µs, max ${(times[n - 1]! * 1000).toFixed(0)} µs over ${n} (${((allowed / n) * 100).toFixed(0)}% allowed)`,
    );
    rec.row({ scenario: 'rbac', target: 'kplane', op: 'RBAC decision, 1k Roles/5k bindings', concurrency: '-', p50, p99, max: times[n - 1]!, n });
    rec.goal('RBAC decision p99, 1,000 Roles and 5,000 bindings', '≤ 0.2 ms', `${p99.toFixed(4)} ms`, p99 <= 0.2);

    // Visibility: create a binding through the API (loopback), wait until the authorizer allows.
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-bench-rbac-'));
    const cp = await createControlPlane({ storage: memory(), dataDir, port: 0, authorizationModes: ['RBAC'] });
    try {
      await cp.start();
      const client = cp.loopbackClient();
      const gvr = (resource: string) => ({ group: RBAC, version: 'v1', resource });
      await client.create(gvr('roles'), 'default', {
        apiVersion: `${RBAC}/v1`,
        kind: 'Role',
        metadata: { name: 'r' },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }],
      });
      const rounds = quick ? 40 : 200;
      const lat: number[] = [];
      const authz = cp.authorization.authorizer!;
      for (let i = 0; i < rounds; i++) {
        const user = { name: `u-${i}`, groups: ['system:authenticated'] };
        const a: AuthorizationAttributes = { ...attrs[0]!, verb: 'get', resource: 'configmaps', namespace: 'default', name: '' };
        const t0 = performance.now();
        await client.create(gvr('rolebindings'), 'default', {
          apiVersion: `${RBAC}/v1`,
          kind: 'RoleBinding',
          metadata: { name: `rb-${i}` },
          roleRef: { apiGroup: RBAC, kind: 'Role', name: 'r' },
          subjects: [{ kind: 'User', apiGroup: RBAC, name: user.name }],
        });
        while ((await authz.authorize(user, a)).decision !== 'allow') {
          if (performance.now() - t0 > 5_000) throw new Error(`binding rb-${i} not visible after 5 s`);
          await new Promise((r) => setImmediate(r));
        }
        lat.push(performance.now() - t0);
      }
      lat.sort((x, y) => x - y);
      const vp50 = percentile(lat, 50);
      const vp99 = percentile(lat, 99);
      console.log(`  binding created → visible: p50 ${vp50.toFixed(2)} ms, p99 ${vp99.toFixed(2)} ms over ${rounds} (create included)`);
      rec.row({
        scenario: 'rbac',
        target: 'kplane',
        op: 'RoleBinding create → visible',
        concurrency: '1',
        p50: vp50,
        p99: vp99,
        max: lat[lat.length - 1]!,
        n: rounds,
      });
      rec.goal('RBAC objects visible to the authorizer, p99', '≤ 100 ms', `${vp99.toFixed(1)} ms`, vp99 <= 100);
    } finally {
      await cp.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    return rec.result();
  },
};
