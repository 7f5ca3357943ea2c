// The shared CEL environment (kube's libraries) for library tests: evaluate an expression, or
// assert that it fails with exactly a message (its first line).
import assert from 'node:assert/strict';
import { baseEnvironment } from '../../src/apimachinery/cel/library.js';

export const celEvaluate = (e: string): unknown => baseEnvironment().evaluate(e, {});

export const assertCelFails = (e: string, message: string): void =>
  assert.throws(
    () => celEvaluate(e),
    (err: Error) => err.message.split('\n')[0] === message,
  );
