// The memory a client that stops reading costs the server (issue 21: 20 clients that never read a
// 51 MB list took a server from 430 MB to 1,784 MB). `kplane serve` runs as a child process; its
// RSS (VmRSS of /proc/<pid>/status) is read before and while STALLED clients hold a ~19 MB list
// each without reading it. Large lists are written as the client reads them, so a stalled one
// holds a chunk or two of its answer (the rest waits in the kernel's socket buffers, which are not
// the process's memory) rather than the whole encoded list: the bound is the baseline plus
// PER_READER_BYTES per stalled client, plus SLACK_BYTES for the allocator and the GC's own swings.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient, type Credentials } from '../support/https.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';

const NS = 'stalled';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
/** ConfigMaps of ~24 KB of incompressible text: a list of ~19 MB. */
const COUNT = 800;
const STALLED = 10;
const MB = 1024 * 1024;
/** What one stalled reader may cost: its chunks in flight and the connection's own buffers. */
const PER_READER_BYTES = 2 * MB;
const SLACK_BYTES = 24 * MB;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/** A GET whose answer is left unread once its headers are in. */
function stalledGet(url: string, creds: Required<Credentials>, path: string): { headers: Promise<IncomingMessage>; close(): void } {
  const base = new URL(url);
  const agent = new Agent({ keepAlive: false, ca: creds.ca, cert: creds.cert, key: creds.key });
  const opts: RequestOptions = { agent, host: base.hostname, port: base.port, path, headers: { accept: 'application/json' } };
  const req = httpsRequest(opts);
  const headers = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end();
  return {
    headers,
    close: () => {
      req.destroy();
      agent.destroy();
    },
  };
}

describe('memory held by clients that stop reading a large list', { timeout: 300_000 }, () => {
  const procs = kplaneProcesses();
  let dir: string;
  let server: KplaneProcess;
  let url: string;
  let creds: Required<Credentials>;
  let client: RawClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-list-memory-'));
    const dataDir = join(dir, 'data');
    // A request timeout longer than the test: the stalled answers must still be in flight when RSS is read.
    server = await procs.start(
      ['serve', '--data-dir', dataDir, '--secure-port', '0', '--controllers=false', '--request-timeout', '10m'],
      /^kplane is serving on (\S+)/m,
    );
    url = /https:\/\/\S+/.exec(server.firstLine)![0];
    creds = adminCredentials(dataDir);
    client = new RawClient(url, creds, { maxSockets: 8 });
    const ns = await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
    });
    assert.equal(ns.status, 201, ns.text());
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < COUNT) {
          const i = next++;
          const r = await client.request({
            method: 'POST',
            path: CMS,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `cm-${i}` },
              data: { payload: randomBytes(18_000).toString('base64') },
            }),
            timeoutMs: 60_000,
          });
          assert.equal(r.status, 201, r.text());
        }
      }),
    );
  });
  after(async () => {
    client?.close();
    procs.killAll();
    await server?.exited;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`stays under baseline + ${STALLED} × ${PER_READER_BYTES / MB} MB + ${SLACK_BYTES / MB} MB with ${STALLED} stalled readers of a 19 MB list`, async (t) => {
    const pid = server.child.pid!;
    // Warm up: whole reads, so the baseline includes what serving the list costs any reader.
    let listBytes = 0;
    for (let i = 0; i < 3; i++) {
      const r = await client.request({ path: CMS, headers: { accept: 'application/json' }, timeoutMs: 120_000 });
      assert.equal(r.status, 200);
      listBytes = r.body.length;
    }
    assert.ok(listBytes > 16e6, `a list of ${listBytes} bytes`);
    await sleep(1_000);
    const baseline = rssBytes(pid);

    const stalled = Array.from({ length: STALLED }, () => stalledGet(url, creds, CMS));
    try {
      for (const s of stalled) assert.equal((await s.headers).statusCode, 200);
      // Let the server write what the connections take and stall on the rest; the highest RSS counts.
      let peak = 0;
      for (let i = 0; i < 10; i++) {
        await sleep(300);
        peak = Math.max(peak, rssBytes(pid));
      }
      const bound = baseline + STALLED * PER_READER_BYTES + SLACK_BYTES;
      const what = `RSS ${(peak / MB).toFixed(0)} MB with ${STALLED} stalled readers, baseline ${(baseline / MB).toFixed(0)} MB, bound ${(bound / MB).toFixed(0)} MB`;
      t.diagnostic(what);
      assert.ok(peak <= bound, what);
    } finally {
      for (const s of stalled) s.close();
    }
    // The server answers on.
    assert.equal((await client.request({ path: `${CMS}?limit=1`, headers: { accept: 'application/json' } })).status, 200);
  });
});
