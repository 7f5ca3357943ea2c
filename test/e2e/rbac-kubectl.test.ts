// RBAC end to end with kubectl 1.20 and 1.33 (one server each, --authorization-mode RBAC, users
// from static tokens): a denied user gets upstream's 403, roles and bindings made with kubectl
// take effect, `kubectl auth can-i` (SelfSubjectAccessReview) and `--list` (SelfSubjectRulesReview)
// answer, escalation is refused, aggregation fills `view`, and `kubectl auth reconcile` works.
// Impersonation (`--as`, `--as-group`) is authorized per user and group with the `impersonate`
// verb; `auth can-i --as system:serviceaccount:...` answers for a ServiceAccount.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { clusterRoleAggregation } from '../../src/controllers/index.js';
import { eventually } from '../support/eventually.js';
import { KUBECTLS, kubectlSession, writeTokenKubeconfig, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const USERS = {
  alice: { token: 'alice-token', groups: ['devs'] },
  bob: { token: 'bob-token', groups: [] as string[] },
};

const userKubeconfig = (dir: string, server: TestServer, user: keyof typeof USERS): Promise<string> =>
  writeTokenKubeconfig(dir, server, user, USERS[user].token);

for (const { name, bin } of KUBECTLS) {
  describe(`RBAC with kubectl ${name}`, () => {
    let server: TestServer;
    let dir: string;
    let admin: KubectlSession;
    let alice: KubectlSession;

    before(async () => {
      server = await startTestServer({
        storage: 'memory',
        authorizationModes: ['RBAC'],
        tokens: new Map(Object.entries(USERS).map(([n, u]) => [u.token, { name: n, groups: [...u.groups, 'system:authenticated'] }])),
        controllers: [clusterRoleAggregation()],
      });
      dir = await mkdtemp(join(tmpdir(), 'kplane-rbac-'));
      admin = kubectlSession(bin, server.kubeconfig, dir);
      alice = kubectlSession(bin, await userKubeconfig(dir, server, 'alice'), dir);
      await admin.ok(['create', 'namespace', 'team-a']);
      await admin.ok(['create', 'namespace', 'team-b']);
    });
    after(async () => {
      await server?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('denies with upstream 403 message', async () => {
      const r = await alice.k(['get', 'configmaps', '-n', 'team-b']);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /Error from server \(Forbidden\): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-b"/,
      );
    });

    it('grants through a Role and RoleBinding made with kubectl create', async () => {
      await admin.ok(['create', 'role', 'cm-reader', '--verb=get,list,watch', '--resource=configmaps', '-n', 'team-a']);
      await admin.ok(['create', 'rolebinding', 'alice-cm', '--role=cm-reader', '--user=alice', '-n', 'team-a']);
      await eventually(5_000, 'alice can list configmaps in team-a', async () =>
        (await alice.k(['get', 'configmaps', '-n', 'team-a'])).code === 0 ? true : undefined,
      );
      const wide = await admin.ok(['get', 'rolebindings', '-n', 'team-a', '-o', 'wide']);
      assert.match(wide, /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS/m);
      assert.match(wide, /^alice-cm\s+Role\/cm-reader\s+\S+\s+alice\s*$/m);
      assert.match(await admin.ok(['get', 'roles', '-n', 'team-a']), /^NAME\s+CREATED AT\ncm-reader\s+\d{4}-/m);
    });

    it('answers kubectl auth can-i and can-i --list', async () => {
      assert.equal((await alice.ok(['auth', 'can-i', 'list', 'configmaps', '-n', 'team-a'])).trim(), 'yes');
      const no = await alice.k(['auth', 'can-i', 'delete', 'secrets', '-n', 'team-b']);
      assert.equal(no.code, 1);
      assert.equal(no.stdout.trim(), 'no');
      assert.equal((await admin.ok(['auth', 'can-i', '*', '*'])).trim(), 'yes');
      const list = await alice.ok(['auth', 'can-i', '--list', '-n', 'team-a']);
      assert.match(list, /^configmaps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
      assert.match(list, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
      assert.match(list, /^\s+\[\/healthz\]\s+\[\]\s+\[get\]$/m);
    });

    it('impersonates with --as/--as-group: allowed when the group is bound, 403 when not, refused without impersonate', async () => {
      await admin.ok(['create', 'namespace', 'team-c']);
      await admin.ok(['create', 'role', 'cm-reader', '--verb=get,list,watch', '--resource=configmaps', '-n', 'team-c']);
      await admin.ok(['create', 'rolebinding', 'devs-cm', '--role=cm-reader', '--group=devs', '-n', 'team-c']);
      await admin.ok(['create', 'configmap', 'settings', '--from-literal=a=1', '-n', 'team-c']);
      // The admin (system:masters) may impersonate anyone; alice is let in through her group only.
      const allowed = await eventually(5_000, 'alice as a dev lists configmaps in team-c', async () => {
        const r = await admin.k(['--as=alice', '--as-group=devs', 'get', 'cm', '-n', 'team-c']);
        return r.code === 0 ? r.stdout : undefined;
      });
      assert.match(allowed, /^settings\s+1\s+/m);
      const forbidden = (ns: string) =>
        `Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`;
      const alone = await admin.k(['--as=alice', 'get', 'cm', '-n', 'team-c']);
      assert.equal(alone.code, 1);
      assert.ok(alone.stderr.includes(forbidden('team-c')), alone.stderr);
      const elsewhere = await admin.k(['--as=alice', '--as-group=devs', 'get', 'cm', '-n', 'team-b']);
      assert.equal(elsewhere.code, 1);
      assert.ok(elsewhere.stderr.includes(forbidden('team-b')), elsewhere.stderr);
      // bob holds no `impersonate`: refused before anything else is decided.
      const bob = kubectlSession(bin, await userKubeconfig(dir, server, 'bob'), dir);
      const refused = await bob.k(['--as=alice', '--as-group=devs', 'get', 'cm', '-n', 'team-c']);
      assert.equal(refused.code, 1);
      assert.ok(
        refused.stderr.includes(
          'Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
        ),
        refused.stderr,
      );
      // Allowed to impersonate the user alice, not the group devs: each is authorized on its own.
      await admin.ok(['create', 'clusterrole', 'impersonate-alice', '--verb=impersonate', '--resource=users', '--resource-name=alice']);
      await admin.ok(['create', 'clusterrolebinding', 'bob-impersonates-alice', '--clusterrole=impersonate-alice', '--user=bob']);
      const asAlice = await eventually(5_000, 'bob as alice lists configmaps in team-a', async () => {
        const r = await bob.k(['--as=alice', 'get', 'cm', '-n', 'team-a']);
        return r.code === 0 ? r : undefined;
      });
      assert.equal(asAlice.code, 0);
      const noGroup = await bob.k(['--as=alice', '--as-group=devs', 'get', 'cm', '-n', 'team-c']);
      assert.equal(noGroup.code, 1);
      assert.ok(
        noGroup.stderr.includes(
          'Error from server (Forbidden): groups "devs" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
        ),
        noGroup.stderr,
      );
    });

    it('answers can-i for a ServiceAccount with --as (kubectl 1.20 has no auth whoami)', async () => {
      const ci = 'system:serviceaccount:team-a:ci';
      await admin.ok(['create', 'serviceaccount', 'ci', '-n', 'team-a']);
      await admin.ok(['create', 'rolebinding', 'ci-cm', '--role=cm-reader', '--serviceaccount=team-a:ci', '-n', 'team-a']);
      await eventually(5_000, 'the ServiceAccount may list configmaps in team-a', async () =>
        (await admin.k(['auth', 'can-i', 'list', 'configmaps', '-n', 'team-a', '--as', ci])).stdout.trim() === 'yes' ? true : undefined,
      );
      const list = await admin.ok(['auth', 'can-i', '--list', '-n', 'team-a', '--as', ci]);
      assert.match(list, /^configmaps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
      assert.match(list, /^selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
      assert.doesNotMatch(list, /^secrets/m);
      const no = await admin.k(['auth', 'can-i', 'delete', 'secrets', '-n', 'team-b', '--as', ci]);
      assert.equal(no.code, 1);
      assert.equal(no.stdout.trim(), 'no');
      if (name === '1.20') {
        const whoami = await admin.k(['auth', 'whoami']);
        assert.notEqual(whoami.code, 0);
        assert.match(whoami.stderr, /unknown command "whoami"/);
      } else {
        const who = JSON.parse(await admin.ok(['auth', 'whoami', '-o', 'json', '--as', ci])) as {
          status: { userInfo: { username: string; groups: string[] } };
        };
        assert.equal(who.status.userInfo.username, ci);
        assert.deepEqual([...who.status.userInfo.groups].sort(), ['system:authenticated', 'system:serviceaccounts', 'system:serviceaccounts:team-a']);
      }
    });

    it('refuses escalation: a Role with more than one holds, binding cluster-admin, editing a binding', async () => {
      await admin.ok([
        'create',
        'clusterrole',
        'rbac-manager',
        '--verb=get,list,watch,create,update,patch,delete',
        '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io',
      ]);
      await admin.ok(['create', 'rolebinding', 'alice-rbac', '--clusterrole=rbac-manager', '--user=alice', '-n', 'team-a']);
      await eventually(5_000, 'alice may create roles', async () =>
        (await alice.ok(['auth', 'can-i', 'create', 'roles', '-n', 'team-a'])).trim() === 'yes' ? true : undefined,
      );
      // Within what she holds: allowed.
      await alice.ok(['create', 'role', 'cm-lister', '--verb=list', '--resource=configmaps', '-n', 'team-a']);
      const role = await alice.k(['create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', 'team-a']);
      assert.equal(role.code, 1);
      assert.match(
        role.stderr,
        /roles\.rbac\.authorization\.k8s\.io "secret-reader" is forbidden: user "alice" \(groups=\["devs" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/,
      );
      const bind = await alice.k(['create', 'rolebinding', 'alice-admin', '--clusterrole=cluster-admin', '--user=alice', '-n', 'team-a']);
      assert.equal(bind.code, 1);
      assert.match(
        bind.stderr,
        /rolebindings\.rbac\.authorization\.k8s\.io "alice-admin" is forbidden: user "alice" .* is attempting to grant RBAC permissions not currently held/,
      );
      // A binding to a role she does not hold: adding herself to it is refused too.
      await admin.ok(['create', 'role', 'secret-reader', '--verb=get', '--resource=secrets', '-n', 'team-a']);
      await admin.ok(['create', 'rolebinding', 'bob-secrets', '--role=secret-reader', '--user=bob', '-n', 'team-a']);
      const patch = await alice.k([
        'patch',
        'rolebinding',
        'bob-secrets',
        '-n',
        'team-a',
        '--type=json',
        '-p',
        '[{"op":"add","path":"/subjects/-","value":{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}}]',
      ]);
      assert.equal(patch.code, 1);
      assert.match(
        patch.stderr,
        /rolebindings\.rbac\.authorization\.k8s\.io "bob-secrets" is forbidden: .*attempting to grant RBAC permissions not currently held/,
      );
      // Her own binding pointed at that role: refused as well (the roleRef cannot change in any case).
      const own = await alice.k(['patch', 'rolebinding', 'alice-cm', '-n', 'team-a', '--type=merge', '-p', '{"roleRef":{"name":"secret-reader"}}']);
      assert.equal(own.code, 1);
      assert.match(own.stderr, /"alice-cm" is forbidden: .*attempting to grant RBAC permissions not currently held/);
      const byAdmin = await admin.k(['patch', 'rolebinding', 'alice-cm', '-n', 'team-a', '--type=merge', '-p', '{"roleRef":{"name":"secret-reader"}}']);
      assert.equal(byAdmin.code, 1);
      assert.match(byAdmin.stderr, /roleRef: Invalid value: .*cannot change roleRef/);
      assert.equal((await alice.k(['get', 'secrets', '-n', 'team-a'])).code, 1);
    });

    it('aggregates a ClusterRole labelled aggregate-to-view into view', async () => {
      const file = join(dir, `agg-${name}.yaml`);
      await writeFile(
        file,
        [
          'apiVersion: rbac.authorization.k8s.io/v1',
          'kind: ClusterRole',
          'metadata:',
          '  name: widget-viewer',
          '  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}',
          'rules:',
          '- apiGroups: [example.com]',
          '  resources: [widgets]',
          '  verbs: [get, list, watch]',
          '',
        ].join('\n'),
      );
      await admin.ok(['apply', '-f', file]);
      for (const role of ['view', 'edit', 'admin']) {
        await eventually(10_000, `${role} holds widgets`, async () => {
          const r = JSON.parse(await admin.ok(['get', 'clusterrole', role, '-o', 'json'])) as { rules?: { resources?: string[] }[] };
          return r.rules?.some((x) => x.resources?.includes('widgets')) ? true : undefined;
        });
      }
    });

    it('reconciles with kubectl auth reconcile', async () => {
      const file = join(dir, `rbac-${name}.yaml`);
      await writeFile(
        file,
        [
          'apiVersion: rbac.authorization.k8s.io/v1',
          'kind: Role',
          'metadata: {name: lease-editor, namespace: team-b}',
          'rules:',
          '- apiGroups: [coordination.k8s.io]',
          '  resources: [leases]',
          '  verbs: [get, list, create]',
          '---',
          'apiVersion: rbac.authorization.k8s.io/v1',
          'kind: RoleBinding',
          'metadata: {name: alice-leases, namespace: team-b}',
          'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease-editor}',
          'subjects:',
          '- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}',
          '',
        ].join('\n'),
      );
      const out = await admin.ok(['auth', 'reconcile', '-f', file]);
      assert.match(out, /role\.rbac\.authorization\.k8s\.io\/lease-editor reconciled/);
      assert.match(out, /rolebinding\.rbac\.authorization\.k8s\.io\/alice-leases reconciled/);
      await eventually(5_000, 'alice can create leases in team-b', async () =>
        (await alice.ok(['auth', 'can-i', 'create', 'leases.coordination.k8s.io', '-n', 'team-b'])).trim() === 'yes' ? true : undefined,
      );
      // Again: nothing to change.
      assert.match(await admin.ok(['auth', 'reconcile', '-f', file]), /lease-editor reconciled/);
    });
  });
}
