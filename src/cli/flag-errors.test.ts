// kplane serve's messages for a command line it cannot use: pure functions, no process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { argumentError, closestFlag, unreadableFlagFile } from './flag-errors.js';

const FLAGS = ['secure-port', 'data-dir', 'token-auth-file', 'storage'];

describe('argumentError', () => {
  it('names the closest known flag for a misspelt one', () => {
    assert.equal(
      argumentError(
        "Unknown option '--secure-prot'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--secure-prot\"",
        FLAGS,
      ),
      'unknown flag: --secure-prot (did you mean --secure-port?); kplane serve --help lists the flags',
    );
    assert.equal(argumentError("Unknown option '--colour'", FLAGS), 'unknown flag: --colour; kplane serve --help lists the flags');
  });

  it('under npm start, gives the command with the flag npm took after "--"', () => {
    const env = { npm_lifecycle_event: 'start', npm_config_secure_port: 'true' };
    assert.equal(
      argumentError("Unexpected argument '16443'. This command does not take positional arguments", FLAGS, env),
      'unexpected argument "16443": npm took --secure-port as its own option; through npm, flags go after "--": npm start -- --secure-port 16443',
    );
  });

  it('outside npm, says that serve takes flags only', () => {
    assert.equal(
      argumentError("Unexpected argument 'serve'. This command does not take positional arguments", FLAGS, {}),
      'unexpected argument "serve": kplane serve takes flags only (kplane serve --help lists them)',
    );
  });

  it('keeps any other parse error, pointing at --help', () => {
    assert.equal(
      argumentError("Option '--data-dir <value>' argument missing", FLAGS, {}),
      "Option '--data-dir <value>' argument missing; kplane serve --help lists the flags",
    );
  });

  it('offers no flag further than two edits away', () => {
    assert.equal(closestFlag('store', FLAGS), 'storage');
    assert.equal(closestFlag('port', FLAGS), undefined);
  });
});

describe('unreadableFlagFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kplane-flag-files-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'tokens.csv');
  writeFileSync(file, 'a,b,c\n');

  it('names the flag, the value as given and the absolute path of a missing file', () => {
    assert.equal(
      unreadableFlagFile([
        ['token-auth-file', file],
        ['client-ca-file', 'nosuch.crt'],
      ]),
      `--client-ca-file=nosuch.crt: no such file (${resolve('nosuch.crt')})`,
    );
  });

  it('checks every value of a repeated flag, and refuses a directory', () => {
    assert.equal(unreadableFlagFile([['service-account-key-file', [file, dir]]]), `--service-account-key-file=${dir}: is a directory, not a file (${dir})`);
  });

  it('is undefined when every file is there or no flag is given', () => {
    assert.equal(
      unreadableFlagFile([
        ['token-auth-file', file],
        ['client-ca-file', undefined],
      ]),
      undefined,
    );
  });
});
