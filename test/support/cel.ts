// The shared CEL environment (kube's libraries) for library tests: evaluate an expression (parsed
// as the control plane parses every expression, see parseCel), or assert that it fails with
// exactly a message (its first line).
import assert from 'node:assert/strict';
import type { Environment } from '@marcbachmann/cel-js';
import { baseEnvironment } from '../../src/apimachinery/cel/library.js';
import { parseCel } from '../../src/apimachinery/cel/source.js';

let env: Environment | undefined;
/** kube's base environment with one variable, `object` (dyn), as an admission policy has it. */
const environment = (): Environment => (env ??= baseEnvironment().clone().registerVariable('object', 'dyn'));

export const celEvaluate = (e: string, vars: Record<string, unknown> = {}): unknown => parseCel(environment(), e)(vars);

export const assertCelFails = (e: string, message: string): void =>
  assert.throws(
    () => celEvaluate(e),
    (err: Error) => err.message.split('\n')[0] === message,
  );
