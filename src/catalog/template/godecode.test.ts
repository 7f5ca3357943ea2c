// How a template file is read: go-yaml v2 scalars, sigs.k8s.io/yaml's guided conversion and
// encoding/json's decoding, each with Go's messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFloat32 as formatFloat32G } from '../../golang/strconv.js';
import { resolvePlain } from '../../golang/yaml-read.js';
import { decodeJSONInto, unmarshalYAMLInto, type GoType } from './godecode.js';

const T: GoType = {
  kind: 'struct',
  goName: 'pkg.T',
  short: 'T',
  fields: [
    { name: 'name', type: { kind: 'string', goName: 'string' } },
    { name: 'enabled', type: { kind: 'bool' } },
    {
      name: 'items',
      type: {
        kind: 'slice',
        goName: '[]pkg.Item',
        elem: { kind: 'struct', goName: 'pkg.Item', short: 'Item', fields: [{ name: 'id', type: { kind: 'string', goName: 'string' } }] },
      },
    },
  ],
};
const strict = (text: string) => unmarshalYAMLInto(text, T, { strictYAML: true, disallowUnknownFields: true });
const lax = (text: string) => unmarshalYAMLInto(text, T, { strictYAML: false, disallowUnknownFields: false });

describe('go-yaml v2 scalar resolution', () => {
  it('YAML 1.1 booleans, nulls, integers in every base, floats; everything else a string', () => {
    for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'ON', 'true', 'True']) assert.equal(resolvePlain(s), true, s);
    for (const s of ['n', 'no', 'off', 'Off', 'false', 'FALSE']) assert.equal(resolvePlain(s), false, s);
    for (const s of ['', '~', 'null', 'Null', 'NULL']) assert.equal(resolvePlain(s), null, s);
    assert.equal(resolvePlain('0x1F'), 31);
    assert.equal(resolvePlain('017'), 15);
    assert.equal(resolvePlain('0b101'), 5);
    assert.equal(resolvePlain('1_000'), 1000);
    assert.equal(resolvePlain('-12'), -12);
    assert.equal(resolvePlain('1.5e3'), 1500);
    assert.equal(resolvePlain('.5'), 0.5);
    assert.equal(resolvePlain('.inf'), Infinity);
    assert.ok(Number.isNaN(resolvePlain('.NaN')));
    assert.equal(resolvePlain('18446744073709551615'), 18446744073709551615n);
    for (const s of ['olm.semver', '1.2.3', 'v1', '2001-01-21', 'Yess', '0x']) assert.equal(resolvePlain(s), s, s);
    // not octal, but ParseFloat takes it
    assert.equal(resolvePlain('08'), 8);
  });
  it("FormatFloat(f, 'g', -1, 32)", () => {
    assert.equal(formatFloat32G(1.5), '1.5');
    assert.equal(formatFloat32G(0.1), '0.1');
    assert.equal(formatFloat32G(100000), '100000');
    assert.equal(formatFloat32G(1234567), '1.234567e+06');
    assert.equal(formatFloat32G(1e21), '1e+21');
    assert.equal(formatFloat32G(123456789), '1.2345679e+08');
    assert.equal(formatFloat32G(0.00001), '1e-05');
    assert.equal(formatFloat32G(-2.25), '-2.25');
  });
});

describe('sigs.k8s.io/yaml into a Go struct', () => {
  it('fields by exact or case-folded name; null leaves a field alone; strings from scalars', () => {
    assert.deepEqual(lax('NAME: 12\nEnabled: yes\nitems:\n- ID: 0x10\n- null\n- id: ~\n'), { name: '12', enabled: true, items: [{ id: '16' }, {}, {}] });
    // YAML 1.1 resolves keys too: `on` is the key "true"
    assert.throws(() => strict('on: 1\n'), { message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "true"' });
    assert.deepEqual(lax('name: ~\n'), {});
    // U+017F (long s) folds to s, as bytes.EqualFold has it
    assert.deepEqual(lax('ſ: 1\nname: x\n'), { name: 'x' });
  });
  it('case variants of one field: decoded in sorted key order, the last wins', () => {
    assert.deepEqual(lax('name: b\nName: a\n'), { name: 'b' });
    assert.deepEqual(lax('Name: a\nname: b\n'), { name: 'b' });
  });
  it('a "__proto__" key is an unknown field like any other', () => {
    assert.throws(() => strict('__proto__: {name: x}\n'), { message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "__proto__"' });
    assert.deepEqual(lax('__proto__: {name: x}\nname: why\n'), { name: 'why' });
  });
  it('type errors: the innermost struct and the whole field path', () => {
    assert.throws(() => strict('items:\n- id: [1]\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field Item.items.id of type string',
    });
    assert.throws(() => strict('enabled: 3\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go struct field T.enabled of type bool',
    });
    assert.throws(() => strict('items: {}\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go struct field T.items of type []pkg.Item',
    });
  });
  it('json.Marshal refuses infinities that are not bound for strings', () => {
    assert.throws(() => lax('other: .inf\n'), { message: 'error converting YAML to JSON: json: unsupported value: +Inf' });
    assert.deepEqual(lax('name: .inf\n'), { name: '+Inf' });
  });
  it('only the first document is read', () => {
    assert.deepEqual(lax('name: a\n---\nname: b\n---\n[: broken\n'), { name: 'a' });
  });
  it('anchors, aliases and merge keys', () => {
    assert.deepEqual(lax('base: &b {id: x}\nitems:\n- *b\n- <<: *b\n'), { items: [{ id: 'x' }, { id: 'x' }] });
  });
  it('excessive aliasing is refused', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    assert.throws(() => lax(lines.join('\n') + '\n'), { message: 'error converting YAML to JSON: yaml: document contains excessive aliasing' });
  });
  it('syntax errors name the line', () => {
    assert.throws(() => lax('name: a\nitems: [x\n'), /^GoDecodeError: error converting YAML to JSON: yaml: line \d+: /);
  });
});

describe('encoding/json of parsed values', () => {
  it('source key order; non-object input', () => {
    assert.deepEqual(decodeJSONInto({ id: 'x' }, T.kind === 'struct' ? (T.fields[2]!.type.kind === 'slice' ? T.fields[2]!.type.elem : T) : T), { id: 'x' });
    assert.throws(() => decodeJSONInto('x', T), { message: 'json: cannot unmarshal string into Go value of type pkg.T' });
    assert.throws(() => decodeJSONInto({ zz: 1, aa: 2 }, T, { disallowUnknownFields: true }), { message: 'json: unknown field "zz"' });
  });
});
