import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../../apimachinery/errors.js';
import type { JSONSchemaProps, ValidationRule } from '../schema/types.js';
import { twentyFieldRules } from '../../../test/support/cel-bench-schema.js';
import { compileRules, evaluate, type CompileOptions, type EvaluateOptions } from './index.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';

/** A CRD-like root schema whose `spec` carries `rules` and `props`. */
function specSchema(rules: ValidationRule[], props: Record<string, JSONSchemaProps>, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps {
  return {
    type: 'object',
    properties: { spec: { type: 'object', properties: props, 'x-kubernetes-validations': rules, ...extra } },
  };
}

function compile(schema: JSONSchemaProps, opts: CompileOptions = {}) {
  const r = compileRules(schema, { path: P, ...opts });
  return { ...r, messages: r.issues.map(issueString) };
}

function run(schema: JSONSchemaProps, obj: unknown, old?: unknown, opts?: EvaluateOptions): string[] {
  const r = compile(schema);
  assert.deepEqual(r.messages, []);
  return evaluate(r.compiled, obj, old, opts).map(issueString);
}

const replicas: Record<string, JSONSchemaProps> = {
  minReplicas: { type: 'integer' },
  maxReplicas: { type: 'integer' },
  replicas: { type: 'integer' },
  name: { type: 'string' },
  items: { type: 'array', maxItems: 10, items: { type: 'object', properties: { name: { type: 'string', maxLength: 64 } } } },
};

describe('compileRules', () => {
  it('reports rules that do not parse, with the cel-go error shape', () => {
    const { messages } = compile(specSchema([{ rule: 'self.replicas +' }], replicas));
    assert.equal(messages.length, 1);
    assert.equal(
      messages[0],
      `${P}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas +", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:16: Syntax error: Unexpected token: EOF\n | self.replicas +\n | ...............^`,
    );
  });

  it('type-checks against the schema: fields, overloads, result type', () => {
    const { messages, issues } = compile(
      specSchema(
        [
          { rule: 'self.replicas > "a"' },
          { rule: 'self.nope > 1' },
          { rule: 'self.replicas' },
          { rule: 'self.replicas > 0' },
          { rule: 'self.name.startsWith("x")' },
          { rule: 'has(self.zzz)' },
        ],
        replicas,
      ),
    );
    assert.equal(issues.length, 4);
    assert.ok(messages[3]!.includes(`compilation failed: ERROR: <input>:1:9: undefined field 'zzz'\n | has(self.zzz)\n | ........^`), messages[3]);
    assert.ok(messages[0]!.includes(`compilation failed: ERROR: <input>:1:15: found no matching overload for '_>_' applied to '(int, string)'`), messages[0]);
    assert.ok(messages[1]!.includes(`compilation failed: ERROR: <input>:1:5: undefined field 'nope'`), messages[1]);
    assert.ok(messages[2]!.endsWith(': cel expression must evaluate to a bool'), messages[2]);
    assert.ok(issues.every((i) => i.type === 'FieldValueInvalid'));
  });

  it('points errors after a has() on any operand into the rule as written', () => {
    // has() of a field of `[self][0]` (not a chain from a variable) is rewritten before parsing.
    const rules = ['has([self][0].name) && self.replicas > "a"', 'has([self][0].zzz)', 'has([self][0].name) && has([self][0].zzz)'];
    const { messages } = compile(
      specSchema(
        rules.map((rule) => ({ rule })),
        replicas,
      ),
    );
    const at = (rule: string, i: number, what: string): string => `compilation failed: ERROR: <input>:1:${i + 1}: ${what}\n | ${rule}\n | ${'.'.repeat(i)}^`;
    const [overload, field, second] = rules as [string, string, string];
    assert.ok(messages[0]!.includes(at(overload, overload.indexOf('>'), "found no matching overload for '_>_' applied to '(int, string)'")), messages[0]);
    assert.ok(messages[1]!.includes(at(field, field.indexOf('.zzz'), "undefined field 'zzz'")), messages[1]);
    assert.ok(messages[2]!.includes(at(second, second.lastIndexOf('.zzz'), "undefined field 'zzz'")), messages[2]);
  });

  it('compiles messageExpression and checks it yields a string', () => {
    const { messages } = compile(
      specSchema(
        [
          { rule: 'true', messageExpression: 'self.replicas' },
          { rule: 'true', messageExpression: '"x" +' },
        ],
        replicas,
      ),
    );
    assert.equal(messages.length, 2);
    assert.match(messages[0]!, /x-kubernetes-validations\[0\]\.messageExpression: Invalid value: .*: messageExpression must evaluate to a string$/);
    assert.match(
      messages[1]!,
      /x-kubernetes-validations\[1\]\.messageExpression: Invalid value: .*: messageExpression compilation failed: ERROR: <input>:1:6: Syntax error: /,
    );
  });

  it('validates fieldPath against the schema', () => {
    const { messages, compiled } = compile(
      specSchema(
        [
          { rule: 'true', fieldPath: '.nope' },
          { rule: 'true', fieldPath: '.items' },
          { rule: 'true', fieldPath: "['name']" },
        ],
        replicas,
      ),
    );
    assert.deepEqual(messages, [
      `${P}.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".nope": fieldPath must be a valid path: does not refer to a valid field`,
    ]);
    const rules = compiled.root!.properties!.get('spec')!.rules;
    assert.deepEqual(
      rules.map((r) => r.fieldPath),
      [undefined, 'items', 'name'],
    );
  });

  it('optionalOldSelf needs oldSelf; oldSelf is refused inside uncorrelatable lists', () => {
    const schema = specSchema([{ rule: 'self.replicas > 0', optionalOldSelf: true }], {
      ...replicas,
      atomic: {
        type: 'array',
        maxItems: 5,
        items: { type: 'object', properties: { a: { type: 'string', maxLength: 5, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } } },
      },
      keyed: {
        type: 'array',
        maxItems: 5,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: {
          type: 'object',
          required: ['k'],
          properties: { k: { type: 'string', maxLength: 5 }, v: { type: 'string', maxLength: 5, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } },
        },
      },
    });
    const { messages } = compile(schema);
    assert.deepEqual(messages, [
      `${P}.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
      `${P}.properties[spec].properties[atomic].items.properties[a].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${P}.properties[spec].properties[atomic]`,
    ]);
  });

  it('rejects an expensive rule on an unbounded list, as upstream', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }] },
          },
        },
      },
    };
    const { messages, issues } = compile(schema);
    assert.equal(issues[0]!.type, 'FieldValueForbidden');
    assert.equal(
      messages[0],
      `${P}.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    );
    // Bounded, the same rule is fine.
    const tags = schema.properties!.spec!.properties!.tags!;
    tags.maxItems = 20;
    tags.items = { type: 'string', maxLength: 63 };
    assert.deepEqual(compile(schema).messages, []);
  });

  it('estimates two-variable comprehensions by the size of what they range over', () => {
    const limits = (maxProperties?: number): JSONSchemaProps => ({
      type: 'object',
      properties: {
        limits: {
          type: 'object',
          ...(maxProperties ? { maxProperties } : {}),
          additionalProperties: { type: 'string', ...(maxProperties ? { maxLength: 63 } : {}) },
          'x-kubernetes-validations': [{ rule: 'self.all(k, v, self.exists(k2, v2, v != v2 && v.startsWith(v2)))' }],
        },
      },
    });
    assert.match(compile(limits()).messages[0] ?? '', /rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/);
    assert.deepEqual(compile(limits(16)).messages, []);
  });

  it('rejects a schema whose rules add up past the per-CRD limit', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        list: {
          type: 'array',
          items: {
            type: 'object',
            properties: { s: { type: 'string', maxLength: 10000 } },
            'x-kubernetes-validations': [{ rule: 'self.s.contains("a") && self.s.contains("b")' }],
          },
        },
      },
    };
    const { messages } = compile(schema);
    assert.deepEqual(messages, [
      `${P}.properties[list].items.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit`,
      `${P}: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 21.1x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
  });

  it('a schema without rules compiles to nothing', () => {
    const r = compileRules({ type: 'object', properties: { a: { type: 'string' } } });
    assert.equal(r.compiled.root, undefined);
    assert.deepEqual(evaluate(r.compiled, { a: 'x' }), []);
  });
});

describe('evaluate', () => {
  it('self.minReplicas <= self.maxReplicas', () => {
    const s = specSchema([{ rule: 'self.minReplicas <= self.maxReplicas' }], replicas);
    assert.deepEqual(run(s, { spec: { minReplicas: 1, maxReplicas: 2 } }), []);
    assert.deepEqual(run(s, { spec: { minReplicas: 3, maxReplicas: 2 } }), ['spec: Invalid value: failed rule: self.minReplicas <= self.maxReplicas']);
  });

  it('macros over lists: all, exists, exists_one, map, filter, has', () => {
    const s = specSchema(
      [
        { rule: 'self.items.all(x, x.name.size() > 0)', message: 'names must be set' },
        { rule: 'self.items.exists(x, x.name == "a")' },
        { rule: 'self.items.exists_one(x, x.name == "b")' },
        { rule: 'self.items.map(x, x.name).filter(n, n.startsWith("z")).size() == 0' },
        { rule: '!has(self.name) || self.name != ""' },
      ],
      replicas,
    );
    assert.deepEqual(run(s, { spec: { items: [{ name: 'a' }, { name: 'b' }] } }), []);
    assert.deepEqual(run(s, { spec: { name: '', items: [{ name: '' }, { name: 'b' }, { name: 'b' }, { name: 'zz' }] } }), [
      'spec: Invalid value: names must be set',
      'spec: Invalid value: failed rule: self.items.exists(x, x.name == "a")',
      'spec: Invalid value: failed rule: self.items.exists_one(x, x.name == "b")',
      'spec: Invalid value: failed rule: self.items.map(x, x.name).filter(n, n.startsWith("z")).size() == 0',
      `spec: Invalid value: failed rule: !has(self.name) || self.name != ""`,
    ]);
  });

  it('has() on a field of an indexed element (cel-go takes any operand)', () => {
    const s = specSchema([{ rule: 'self.items.size() == 0 || has(self.items[0].name)', message: 'the first item needs a name' }], replicas);
    assert.deepEqual(run(s, { spec: { items: [] } }), []);
    assert.deepEqual(run(s, { spec: { items: [{ name: 'a' }, {}] } }), []);
    assert.deepEqual(run(s, { spec: { items: [{}, { name: 'a' }] } }), ['spec: Invalid value: the first item needs a name']);
    // A field the schema does not have: refused when the rule is written, as cel-go does.
    const undef = compile(specSchema([{ rule: 'has(self.items[0].nope)' }], replicas));
    assert.equal(undef.messages.length, 1);
    assert.match(undef.messages[0]!, /compilation failed: ERROR: <input>:1:18: undefined field 'nope'\n \| has\(self\.items\[0\]\.nope\)\n \| \.{17}\^$/);
    // Out of range: the same error as has() gives upstream.
    const out = specSchema([{ rule: 'has(self.items[1].name)' }], replicas);
    assert.match(run(out, { spec: { items: [{ name: 'a' }] } }).join('\n'), /index out of bounds/);
  });

  it('the format library and the sets extension (kube 1.29+, 1.31+) in rules and messages', () => {
    const s = specSchema(
      [
        {
          rule: '!format.dns1123Label().validate(self.name).hasValue()',
          messageExpression: "format.dns1123Label().validate(self.name).value().join(', ')",
        },
        { rule: "sets.contains(['a', 'b', 'c'], self.items.map(i, i.name))", message: 'item names are a, b or c' },
      ],
      replicas,
    );
    assert.deepEqual(run(s, { spec: { name: 'ok-name', items: [{ name: 'a' }, { name: 'c' }] } }), []);
    assert.deepEqual(run(s, { spec: { name: 'Not_OK', items: [{ name: 'd' }] } }), [
      "spec: Invalid value: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec: Invalid value: item names are a, b or c',
    ]);
  });

  it('the ip and cidr libraries (kube 1.30+) in rules', () => {
    const s = specSchema([{ rule: "isIP(self.name) && cidr('192.0.2.0/24').containsIP(self.name)", message: 'name is an address of 192.0.2.0/24' }], replicas);
    assert.deepEqual(run(s, { spec: { name: '192.0.2.7' } }), []);
    assert.deepEqual(run(s, { spec: { name: '198.51.100.7' } }), ['spec: Invalid value: name is an address of 192.0.2.0/24']);
  });

  it('transition rules: immutability on update, skipped on create', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] } },
        },
      },
    };
    assert.deepEqual(run(s, { spec: { name: 'a' } }), []); // create: no oldSelf, rule skipped
    assert.deepEqual(run(s, { spec: { name: 'a' } }, { spec: { name: 'a' } }), []);
    assert.deepEqual(run(s, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec.name: Invalid value: "b": name is immutable']);
    // Added on update where the old object had no value: still skipped.
    assert.deepEqual(run(s, { spec: { name: 'b' } }, { spec: {} }), []);
  });

  it('whole-object equality of message types (self == oldSelf on an object)', () => {
    const s = specSchema([{ rule: 'self == oldSelf', message: 'spec is immutable' }], replicas);
    const spec = { minReplicas: 1, items: [{ name: 'a' }] };
    assert.deepEqual(run(s, { spec }, { spec: structuredClone(spec) }), []);
    assert.deepEqual(run(s, { spec: { ...spec, items: [{ name: 'b' }] } }, { spec }), ['spec: Invalid value: spec is immutable']);
  });

  it('int is int64: values past 2^53 (bigints) compare, add and equal exactly', () => {
    const s = specSchema(
      [
        { rule: 'self.replicas != 9223372036854775806', message: 'not 2^63-2' },
        { rule: 'self.maxReplicas - self.minReplicas == 1', message: 'one apart' },
        { rule: 'self.minReplicas < self.maxReplicas', message: 'ordered' },
        { rule: '[self.minReplicas, self.maxReplicas].all(x, x >= -9223372036854775808)' },
      ],
      replicas,
    );
    assert.deepEqual(run(s, { spec: { replicas: 9223372036854775807n, minReplicas: 9007199254740992n, maxReplicas: 9007199254740993n } }), []);
    assert.deepEqual(run(s, { spec: { replicas: 9223372036854775806n, minReplicas: 9007199254740993n, maxReplicas: 9007199254740992n } }), [
      'spec: Invalid value: not 2^63-2',
      'spec: Invalid value: one apart',
      'spec: Invalid value: ordered',
    ]);
    // Transition rules see 2^63-2 and 2^63-1 as different values (the same double).
    const t = specSchema([{ rule: 'self == oldSelf', message: 'immutable' }], replicas);
    assert.deepEqual(run(t, { spec: { replicas: 9223372036854775807n } }, { spec: { replicas: 9223372036854775806n } }), ['spec: Invalid value: immutable']);
    assert.deepEqual(run(t, { spec: { replicas: 9223372036854775807n } }, { spec: { replicas: 9223372036854775807n } }), []);
  });

  it('optionalOldSelf runs on create with oldSelf as an optional', () => {
    const s = specSchema(
      [{ rule: '!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas', message: 'no scale down', optionalOldSelf: true }],
      replicas,
    );
    assert.deepEqual(run(s, { spec: { replicas: 1 } }), []);
    assert.deepEqual(run(s, { spec: { replicas: 1 } }, { spec: { replicas: 2 } }), ['spec: Invalid value: no scale down']);
  });

  it('messageExpression, reason and fieldPath shape the error', () => {
    const s = specSchema(
      [
        { rule: 'self.replicas < 10', messageExpression: '"replicas " + string(self.replicas) + " is too many"', fieldPath: '.replicas' },
        { rule: 'has(self.name)', message: 'name is required', reason: 'FieldValueRequired', fieldPath: '.name' },
        { rule: 'self.replicas != 12', message: 'twelve is forbidden', reason: 'FieldValueForbidden' },
        { rule: 'false', messageExpression: '"\\n"', message: 'fallback message' },
      ],
      replicas,
    );
    assert.deepEqual(run(s, { spec: { replicas: 12 } }), [
      'spec.replicas: Invalid value: replicas 12 is too many',
      'spec.name: Required value: name is required',
      'spec: Forbidden: twelve is forbidden',
      'spec: Invalid value: fallback message',
    ]);
  });

  it('scalar nodes print the bad value; the root prints as <nil>', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("ok-")' }],
      properties: { n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'must be even' }] } },
    };
    assert.deepEqual(run(s, { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'bad' }, n: 3 }), [
      '<nil>: Invalid value: failed rule: self.metadata.name.startsWith("ok-")',
      'n: Invalid value: 3: must be even',
    ]);
  });

  it('runtime errors are reported per rule', () => {
    const s = specSchema([{ rule: 'self.minReplicas / (self.maxReplicas - self.maxReplicas) > 0' }, { rule: 'self.items[5].name == ""' }], replicas);
    const out = run(s, { spec: { minReplicas: 1, maxReplicas: 1, items: [] } });
    assert.equal(out.length, 2);
    assert.match(out[0]!, /^spec: Invalid value: "object": .*division by zero.* evaluating rule: self\.minReplicas/i);
    assert.match(out[1]!, /^spec: Invalid value: "object": .*index out of bounds.* evaluating rule: self\.items\[5\]\.name == ""$/);
  });

  it('maps via additionalProperties, int-or-string, preserve-unknown-fields, escaped names', () => {
    const s = specSchema(
      [
        { rule: 'self.labels.all(k, k.size() < 10 && self.labels[k] != "")' },
        { rule: 'type(self.port) == int ? self.port > 0 : self.port.endsWith("%")' },
        { rule: 'self.extra.deep.n == 1' },
        { rule: 'self.foo__dash__bar == "x" && self.__namespace__ == "ns"' },
      ],
      {
        labels: { type: 'object', maxProperties: 10, additionalProperties: { type: 'string', maxLength: 10 } },
        port: { 'x-kubernetes-int-or-string': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        'foo-bar': { type: 'string' },
        namespace: { type: 'string' },
      },
    );
    assert.deepEqual(run(s, { spec: { labels: { a: 'b' }, port: 8080, extra: { deep: { n: 1 } }, 'foo-bar': 'x', namespace: 'ns' } }), []);
    assert.deepEqual(run(s, { spec: { labels: { a: 'b' }, port: '50%', extra: { deep: { n: 1 } }, 'foo-bar': 'x', namespace: 'ns' } }), []);
    assert.equal(run(s, { spec: { labels: { a: '' }, port: '50', extra: { deep: { n: 2 } }, 'foo-bar': 'y', namespace: 'ns' } }).length, 4);
  });

  it('list-type=map lists correlate old items by key for transition rules', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          maxItems: 10,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', maxLength: 10 },
              port: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'port is immutable' }] },
            },
          },
        },
      },
    };
    const old = {
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2 },
      ],
    };
    assert.deepEqual(
      run(
        s,
        {
          ports: [
            { name: 'b', port: 2 },
            { name: 'a', port: 1 },
            { name: 'c', port: 3 },
          ],
        },
        old,
      ),
      [],
    );
    assert.deepEqual(run(s, { ports: [{ name: 'b', port: 5 }] }, old), ['ports[0].port: Invalid value: 5: port is immutable']);
  });

  it('kube libraries: lists, strings, regex (RE2), url, quantity', () => {
    const s = specSchema(
      [
        { rule: 'self.nums.isSorted() && self.nums.sum() == 6 && self.nums.min() == 1 && self.nums.max() == 3' },
        { rule: 'self.nums.indexOf(2) == 1 && self.nums.lastIndexOf(9) == -1' },
        { rule: 'self.s.charAt(0) == "H" && self.s.lowerAscii() == "hello, world" && self.s.upperAscii() == "HELLO, WORLD"' },
        { rule: 'self.s.replace("l", "L") == "HeLLo, WorLd" && self.s.split(", ") == ["Hello", "World"] && " x ".trim() == "x"' },
        { rule: 'self.s.substring(7) == "World" && self.s.indexOf("o") == 4 && ["a", "b"].join("-") == "a-b"' },
        { rule: 'self.s.matches("^H.*d$") && self.s.find("[A-Z][a-z]+") == "Hello" && self.s.findAll("o") == ["o", "o"]' },
        { rule: 'url(self.u).getHost() == "example.com:8443" && url(self.u).getScheme() == "https" && isURL(self.u)' },
        { rule: 'quantity(self.q).isGreaterThan(quantity("1Gi")) && quantity("500m").asApproximateFloat() == 0.5' },
      ],
      {
        nums: { type: 'array', maxItems: 5, items: { type: 'integer' } },
        s: { type: 'string', maxLength: 20 },
        u: { type: 'string', maxLength: 100 },
        q: { type: 'string', maxLength: 20 },
      },
    );
    assert.deepEqual(run(s, { spec: { nums: [1, 2, 3], s: 'Hello, World', u: 'https://example.com:8443/x', q: '1.5Gi' } }), []);
  });

  it('quantity library: parsing without trimming, arithmetic, comparison, integers', () => {
    const s = specSchema(
      [
        { rule: 'isQuantity("1.5Gi") && isQuantity("1e3") && isQuantity(".5") && !isQuantity(" 1") && !isQuantity("1Qi") && !isQuantity("-")' },
        { rule: 'quantity("1k") == quantity("1000") && quantity("1Ki").compareTo(quantity("1k")) == 1 && quantity("1m").isLessThan(quantity("1"))' },
        { rule: 'quantity("1").add(quantity("500m")) == quantity("1500m") && quantity("2").sub(1) == quantity("1") && quantity("1").add(2) == quantity("3")' },
        { rule: 'quantity("2Ki").isInteger() && quantity("2Ki").asInteger() == 2048 && !quantity("1500m").isInteger() && quantity("-3").sign() == -1' },
        { rule: '[quantity("1m"), quantity("1"), quantity("1k")].isSorted() && ![quantity("1k"), quantity("1")].isSorted()' },
      ],
      {},
    );
    assert.deepEqual(run(s, { spec: {} }), []);
    const bad = specSchema([{ rule: 'quantity(self.q).sign() >= 0' }], { q: { type: 'string', maxLength: 20 } });
    assert.equal(run(bad, { spec: { q: '1 ' } }).length, 1);
  });

  // A backtracking matcher would take 2^40 steps here: the test's timeout is the check.
  it('regular expressions run in linear time (no catastrophic backtracking)', { timeout: 10_000 }, () => {
    const s = specSchema([{ rule: 'self.s.matches("^(a+)+$")' }], { s: { type: 'string', maxLength: 100 } });
    const out = run(s, { spec: { s: 'a'.repeat(40) + '!' } });
    assert.equal(out.length, 1);
  });

  it("matches, find and findAll are Go's regexp: RE2 syntax, FindAllString's empty matches", () => {
    const s = specSchema(
      [
        { rule: 'self.s.matches("^(?i)(abort|warn)?$")' },
        { rule: 'matches(self.s, "^((?i)ab|cd)ORT$")' },
        { rule: 'self.g.matches("^\\\\p{Greek}+$") && self.g.matches("^\\\\pL+$") && !self.g.matches("^\\\\PL+$")' },
        { rule: '"A".matches("^\\\\x{41}$") && "a.b".matches("^\\\\Qa.b\\\\E$") && !"axb".matches("^\\\\Qa.b\\\\E$")' },
        { rule: '"ab".matches("\\\\Aab\\\\z") && "Ab".matches("^[[:upper:]][[:lower:]]$") && "x".matches("(?P<a>x)|(?P<a>y)")' },
        { rule: '"baaa".find("(?U)a+") == "a" && "baaac".findAll("a*") == ["", "aaa", ""]' },
      ],
      { s: { type: 'string', maxLength: 10 }, g: { type: 'string', maxLength: 10 } },
    );
    assert.deepEqual(run(s, { spec: { s: 'ABORT', g: 'αβγ' } }), []);
    assert.deepEqual(run(s, { spec: { s: 'abort', g: 'αβγ' } }), ['spec: Invalid value: failed rule: matches(self.s, "^((?i)ab|cd)ORT$")']);
  });

  it('a constant pattern Go refuses fails at compile time, with upstream texts', () => {
    const { messages } = compile(
      specSchema([{ rule: 'self.s.matches("(?=x)")' }, { rule: 'self.s.find(")") == ""' }, { rule: 'self.s.findAll("a\\\\1") == []' }], {
        s: { type: 'string', maxLength: 10 },
      }),
    );
    assert.equal(messages.length, 3, messages.join('\n'));
    assert.ok(
      messages[0]!.endsWith(': compilation failed: ERROR: <input>:1:16: invalid matches argument\n | self.s.matches("(?=x)")\n | ...............^'),
      messages[0],
    );
    assert.ok(messages[1]!.endsWith(': program instantiation failed: error parsing regexp: unexpected ): `)`'), messages[1]);
    assert.ok(messages[2]!.endsWith(': program instantiation failed: error parsing regexp: invalid escape sequence: `\\1`'), messages[2]);
  });

  it("a pattern known only at run time fails the rule with Go's error", () => {
    const s = specSchema([{ rule: 'self.s.matches(self.p)' }], { s: { type: 'string', maxLength: 10 }, p: { type: 'string', maxLength: 10 } });
    const out = run(s, { spec: { s: 'a', p: '(?<=a)' } });
    assert.equal(out.length, 1);
    assert.match(out[0]!, /error parsing regexp: invalid named capture: `\(\?<=a\)`/);
  });

  it('a pathological rule is stopped by the per-call cost limit', { timeout: 10_000 }, () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        l: {
          type: 'array',
          maxItems: 2000,
          items: { type: 'integer' },
          'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, self.all(z, x + y + z >= 0)))' }, { rule: 'false' }],
        },
      },
    };
    const r = compileRules(schema, { path: P });
    assert.match(issueString(r.issues[0]!), /estimated rule cost exceeds budget by factor of more than 100x/);
    // Evaluate anyway (as if the limit had been raised): the runtime guard stops it (8·10^9
    // steps otherwise; the test's timeout is the check that it stops early).
    const out = evaluate(r.compiled, { l: Array.from({ length: 2000 }, (_, i) => i) }).map(issueString);
    assert.deepEqual(out, [
      `l: Invalid value: "array": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, self.all(z, x + y + z >= 0)))`,
    ]);
  });

  it('the request budget and the wall-clock guard stop evaluation', { timeout: 10_000 }, () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        l: { type: 'array', maxItems: 2000, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x + y >= 0))' }] },
      },
    };
    const r = compileRules(schema, { path: P, perCallLimit: Number.POSITIVE_INFINITY });
    const obj = { l: Array.from({ length: 2000 }, (_, i) => i) };
    const budget = evaluate(r.compiled, obj, undefined, { budget: 1000 }).map(issueString);
    assert.deepEqual(budget, ['l: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run']);
    const timed = evaluate(r.compiled, obj, undefined, { budget: Number.POSITIVE_INFINITY, timeoutMs: 30 }).map(issueString);
    assert.deepEqual(timed, budget);
  });

  it('2 rules on a 20-field object pass (its timing: npm run bench -- --only micro)', () => {
    const { schema, spec: obj } = twentyFieldRules();
    const r = compileRules(schema, { path: P });
    assert.deepEqual(r.issues, []);
    const cr = { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'a' }, spec: obj };
    assert.deepEqual(evaluate(r.compiled, cr), []);
    assert.equal(evaluate(r.compiled, { ...cr, spec: { ...obj, minReplicas: 9 } }).length, 1, 'minReplicas > maxReplicas breaks the first rule');
  });
});
