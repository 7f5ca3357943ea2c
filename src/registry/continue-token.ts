// List continue tokens as k8s.io/apiserver/pkg/storage/continue.go writes and reads them: base64
// (URL alphabet, no padding) of {"v":"meta.k8s.io/v1","rv":<int64>,"start":"<key after the prefix>"}.
// A token is the client's to forge: decoding refuses what upstream refuses, with its words, and
// above all a start key that would climb out of the list's prefix (`../kube-system/…`).
import { badRequest, type StatusError } from '../apimachinery/errors.js';
import { decodeJSON, numberTextAt, unmarshalSyntaxError } from '../golang/json-decode.js';
import { jsonKind, numberValue, unmarshalTypeError } from '../golang/json-errors.js';

const CONTINUE_VERSION = 'meta.k8s.io/v1';

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: CONTINUE_VERSION, rv, start })).toString('base64url');
}

/** storage.DecodeContinue's errors, as the list answers them (400, "invalid continue token: …"). */
function invalid(why: string): StatusError {
  return badRequest(`invalid continue token: ${why}`);
}

const GENERIC = 'continue key is not valid';
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * The token's revision (negative: upstream's "inconsistent continuation", read at the latest) and
 * start key (relative to the list's prefix; never climbs out of it).
 */
export function decodeContinue(token: string): { rv: number; start: string } {
  // base64.RawURLEncoding: Node's decoder skips what is not in the alphabet; Go's refuses it.
  const bad = /[^A-Za-z0-9_-]/.exec(token);
  if (bad) throw invalid(`${GENERIC}: illegal base64 data at input byte ${bad.index}`);
  if (token.length % 4 === 1) throw invalid(`${GENERIC}: illegal base64 data at input byte ${token.length - 1}`);
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const syntax = unmarshalSyntaxError(text);
  if (syntax !== undefined) throw invalid(`${GENERIC}: ${syntax}`);
  const decoded = decodeJSON(text);
  if (decoded.error !== undefined) throw invalid(`${GENERIC}: ${decoded.error}`);
  const value = decoded.value;
  let v = '';
  let rv = 0;
  let start = '';
  if (value !== null) {
    if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${GENERIC}: ${unmarshalTypeError(jsonKind(value), 'storage.continueToken')}`);
    // encoding/json: keys match field names exactly, else case-insensitively; the last one wins;
    // null leaves a field alone; the first type error is the one reported, after the whole object.
    let firstError: string | undefined;
    const typeError = (kind: string, field: string, goType: string): void => {
      firstError ??= unmarshalTypeError(kind, goType, { struct: 'continueToken', field });
    };
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const field = key === 'v' || key === 'rv' || key === 'start' ? key : ['v', 'rv', 'start'].find((f) => f === key.toLowerCase());
      const x = obj[key];
      if (field === undefined || x === null) continue;
      if (field === 'rv') {
        if (typeof x !== 'number') {
          typeError(jsonKind(x), 'rv', 'int64');
          continue;
        }
        const literal = numberTextAt(obj, key, x)?.literal ?? String(x);
        const n = /^-?[0-9]+$/.test(literal) ? BigInt(literal) : undefined;
        if (n === undefined || n > INT64_MAX || n < INT64_MIN) typeError(numberValue(literal), 'rv', 'int64');
        else rv = Number(n);
      } else if (typeof x !== 'string') typeError(jsonKind(x), field, 'string');
      else if (field === 'v') v = x;
      else start = x;
    }
    if (firstError !== undefined) throw invalid(`${GENERIC}: ${firstError}`);
  }
  if (v !== CONTINUE_VERSION) throw invalid(`${GENERIC}: server does not recognize this encoded version ${v}`);
  if (rv === 0) throw invalid(`${GENERIC}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`);
  if (start === '') throw invalid(`${GENERIC}: encoded start key empty (version meta.k8s.io/v1)`);
  // Upstream's defence against path traversal: "/" + start must be what path.Clean makes of it,
  // so the key stays below the list's prefix.
  const rooted = start.startsWith('/') ? start : `/${start}`;
  if (!isCleanRootedPath(rooted)) throw invalid(`${GENERIC}: ${start}`);
  return { rv, start: rooted.slice(1) };
}

/** Whether Go's path.Clean leaves the rooted path `p` as it is: no empty, `.` or `..` element, no trailing slash. */
function isCleanRootedPath(p: string): boolean {
  if (p === '/') return true;
  if (p.endsWith('/')) return false;
  return p
    .slice(1)
    .split('/')
    .every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}
