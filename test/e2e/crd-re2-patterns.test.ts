// CRD `pattern`s are Go RE2 expressions, as kube-apiserver compiles them: kubectl 1.33 applies
// CRDs whose patterns use every RE2 construct (prometheus-operator's among them), creates custom
// resources kube accepts and is refused those kube refuses (422, "should match '<pattern>'"),
// and a CRD whose pattern RE2 refuses is itself refused with Go's regexp/syntax error text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitServed } from '../support/crd.js';
import { useKubectlServer } from '../support/kubectl.js';
import { ensureTools, tools } from '../support/tools.js';

ensureTools();

// [field, pattern]; single-quoted in YAML, so a backslash is itself.
const PATTERNS: [string, string][] = [
  // prometheus-operator: PrometheusRule's partial_response_strategy, and AlertmanagerConfig's months
  ['strategy', '^(?i)(abort|warn)?$'],
  [
    'months',
    '^((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9])(?:((:((?i)january|february|march|april|may|june|july|august|september|october|november|december|1[0-2]|[1-9]))$)|$)',
  ],
  ['greek', '^\\p{Greek}+$'],
  ['letters', '^\\pL+$'],
  ['noLetters', '^\\P{L}+$'],
  ['hex', '^\\x{41}$'],
  ['quoted', '^\\Qa.b\\E$'],
  ['group', '^a(?i:b)c$'],
  ['dotall', '(?s)^a.b$'],
  ['multiline', '(?m)^ok$'],
  ['named', '^(?P<major>[0-9]+)\\.(?<minor>[0-9]+)$'],
  ['anchors', '\\A[[:alpha:]][[:alnum:]_]*\\z'],
  ['word', '\\bgo\\b'],
];

const props = PATTERNS.map(([f, p]) => `              ${f}: {type: string, pattern: '${p}'}`).join('\n');

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rules.re2.example.com
spec:
  group: re2.example.com
  scope: Namespaced
  names: {plural: rules, singular: rule, kind: Rule}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
${props}
`;

// One object per value, so each refusal carries one cause.
const rule = (name: string, field: string, value: string): string =>
  `apiVersion: re2.example.com/v1\nkind: Rule\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  ${field}: ${JSON.stringify(value)}\n`;

// Values kube-apiserver accepts: the last four are what a JavaScript RegExp got wrong.
const ACCEPTED: [string, string][] = [
  ['strategy', 'WARN'],
  ['strategy', 'Abort'],
  ['strategy', ''],
  ['months', 'JANUARY'],
  ['months', 'january:March'],
  ['months', '12'],
  ['group', 'aBc'],
  ['dotall', 'a\nb'],
  ['multiline', 'first\nok\nlast'],
  ['named', '1.33'],
  ['anchors', 'a_1'],
  ['word', 'let go now'],
  ['noLetters', '1-2'],
  ['greek', 'αβγ'],
  ['letters', 'héllo'],
  ['hex', 'A'],
  ['quoted', 'a.b'],
];

const REFUSED: [string, string][] = [
  ['strategy', 'stop'],
  ['months', 'Smarch'],
  ['greek', 'abc'],
  ['letters', 'h3llo'],
  ['noLetters', 'x'],
  ['hex', 'B'],
  ['quoted', 'axb'],
  ['group', 'ABC'],
  ['dotall', 'a\n\nb'],
  ['multiline', 'not ok'],
  ['named', '1.x'],
  ['anchors', 'a-1'],
  ['word', 'gopher'],
];

// [pattern, Go's regexp.Compile error]
const BAD_PATTERNS: [string, string][] = [
  ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
  ['^(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
  ['^(?!a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
  ['(?<=a)b', 'error parsing regexp: invalid named capture: `(?<=a)b`'],
  ['a\\Z', 'error parsing regexp: invalid escape sequence: `\\Z`'],
  ['a++', 'error parsing regexp: invalid nested repetition operator: `++`'],
];

const BAD_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bads.re2.example.com
spec:
  group: re2.example.com
  scope: Namespaced
  names: {plural: bads, singular: bad, kind: Bad}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
${BAD_PATTERNS.map(([p], i) => `              f${i}: {type: string, pattern: '${p}'}`).join('\n')}
`;

// kubectl and JSON both quote with Go's %q rules for these ASCII-and-newline values.
const quoted = (s: string): string => JSON.stringify(s);

describe('kubectl 1.33 and CRD patterns in RE2 syntax', { concurrency: false, timeout: 120_000 }, () => {
  const env = useKubectlServer(tools.kubectl, 'kplane-crd-re2-');
  const { ok, k, file } = env;

  it('applies a CRD whose patterns use RE2 constructs JavaScript reads differently', async () => {
    assert.equal(await ok(['apply', '-f', await file('crd.yaml', CRD)]), 'customresourcedefinition.apiextensions.k8s.io/rules.re2.example.com created\n');
    await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/rules.re2.example.com']);
    await waitServed(env.raw, '/apis/re2.example.com/v1/rules');
  });

  it('creates the custom resources kube-apiserver accepts', async () => {
    for (const [i, [field, value]] of ACCEPTED.entries()) {
      const out = await ok(['create', '-f', await file(`ok-${i}.yaml`, rule(`ok-${i}`, field, value))]);
      assert.equal(out, `rule.re2.example.com/ok-${i} created\n`, `${field}: ${quoted(value)}`);
    }
  });

  it("refuses the values kube-apiserver refuses, with upstream's should-match text", async () => {
    for (const [i, [field, value]] of REFUSED.entries()) {
      const pattern = PATTERNS.find(([f]) => f === field)![1];
      const r = await k(['create', '-f', await file(`bad-${i}.yaml`, rule(`bad-${i}`, field, value))]);
      assert.equal(r.code, 1, `${field}: ${quoted(value)} should be refused`);
      assert.equal(
        r.stderr,
        `The Rule "bad-${i}" is invalid: spec.${field}: Invalid value: ${quoted(value)}: spec.${field} in body should match '${pattern}'\n`,
      );
    }
    // The same refusal through the API: 422 Invalid, one cause naming the field.
    const res = await env.raw.request({
      method: 'POST',
      path: '/apis/re2.example.com/v1/namespaces/default/rules',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 're2.example.com/v1', kind: 'Rule', metadata: { name: 'raw' }, spec: { strategy: 'stop' } }),
    });
    assert.equal(res.status, 422);
    const status = res.json<{ reason: string; message: string; details: { causes: { type: string; field: string; message: string }[] } }>();
    assert.equal(status.reason, 'Invalid');
    assert.equal(
      status.message,
      `Rule.re2.example.com "raw" is invalid: spec.strategy: Invalid value: "stop": spec.strategy in body should match '^(?i)(abort|warn)?$'`,
    );
    assert.deepEqual(status.details.causes, [
      { reason: 'FieldValueInvalid', message: `Invalid value: "stop": spec.strategy in body should match '^(?i)(abort|warn)?$'`, field: 'spec.strategy' },
    ]);
  });

  it("refuses a CRD whose patterns RE2 refuses, with Go's regexp error for each", async () => {
    const r = await k(['create', '-f', await file('bad-crd.yaml', BAD_CRD)]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /^The CustomResourceDefinition "bads\.re2\.example\.com" is invalid: \n/);
    for (const [i, [pattern, error]] of BAD_PATTERNS.entries()) {
      const line = `* spec.validation.openAPIV3Schema.properties[spec].properties[f${i}].pattern: Invalid value: ${quoted(pattern)}: must be a valid regular expression, but isn't: ${error}\n`;
      assert.ok(r.stderr.includes(line), `missing:\n${line}in:\n${r.stderr}`);
    }
    assert.equal((await env.raw.request({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bads.re2.example.com' })).status, 404);
  });
});
