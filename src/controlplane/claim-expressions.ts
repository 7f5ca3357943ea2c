// The JWT authenticators' CEL (src/auth/authn/jwt.ts), built on the shared CEL environment
// (src/apimachinery/cel: kube's libraries, re2 regular expressions, the cost meter). `claims` and
// `user` are dynamic maps, as upstream declares them; each evaluation is bounded by the per-call
// cost limit and 1 s of wall-clock time.
import { baseEnvironment, armMeter } from '../apimachinery/cel/library.js';
import { celErrorText, PER_CALL_LIMIT } from '../apimachinery/cel/expressions.js';
import type { ClaimExpressionCompiler } from '../auth/authn/jwt.js';
import { celSourceMap, parseCel } from '../apimachinery/cel/source.js';

export const claimExpressions: ClaimExpressionCompiler = {
  compile(expression, variable) {
    const env = baseEnvironment().clone();
    env.registerVariable(variable, 'map');
    let program: ReturnType<typeof env.parse>;
    try {
      program = parseCel(env, expression);
    } catch (e) {
      throw new Error(celErrorText(expression, e, celSourceMap(expression)), { cause: e });
    }
    const checked = program.check();
    if (!checked.valid) throw new Error(celErrorText(expression, checked.error, celSourceMap(expression)));
    return {
      evaluate(vars) {
        armMeter(PER_CALL_LIMIT, performance.now() + 1000);
        const value: unknown = program(vars);
        return value;
      },
    };
  },
};
