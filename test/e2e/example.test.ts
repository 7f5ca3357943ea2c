// The README's library example runs as written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { run } from '../support/tools.js';

test('examples/embedded.ts starts a control plane, creates through its API and stops', async () => {
  const r = await run(process.execPath, ['--import', 'tsx', 'examples/embedded.ts'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^create: 201$/m);
  // authentication.k8s.io (TokenReview, SelfSubjectReview) is served whatever the modules, as the
  // generic control plane serves it: it answers from the authenticator, not from storage.
  assert.match(r.stdout, /^groups: authentication\.k8s\.io, coordination\.k8s\.io$/m);
});
