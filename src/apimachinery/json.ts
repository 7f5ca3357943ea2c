// Request-body JSON decoding with kube's strictness, as 400s: duplicate keys are reported (sigs.k8s.io/json
// strict mode: `duplicate field "metadata.name"`) or refused (fieldValidation=Strict), nesting is
// capped at encoding/json's 10000, and a malformed body gets Go's encoding/json message plus where
// it went wrong. The decoding is golang/json-decode.ts's; this module turns its verdicts into Status
// errors.
import { StatusError, badRequest } from './errors.js';
import type { JsonValue } from './types.js';
import { strictDuplicateField } from '../golang/json-errors.js';
import { MAX_NESTING_DEPTH } from '../golang/json-scanner.js';
import { decodeJSON } from '../golang/json-decode.js';

// The decoding itself, and the number texts it records, live in golang/json-decode.ts.
export {
  copyNumberTexts,
  describeJsonSyntaxError,
  forEachNumberText,
  hasNumberTexts,
  mayHoldLongIntegers,
  numberTextAt,
  numberTextsIn,
  recordNumberTextsOf,
  setNumberText,
  type NumberText,
} from '../golang/json-decode.js';

export const MAX_JSON_DEPTH = MAX_NESTING_DEPTH;

export interface ParseJsonOptions {
  /** Deepest allowed nesting of objects and arrays (encoding/json's maxNestingDepth). */
  maxDepth?: number;
  /** Fail on duplicate keys (fieldValidation=Strict) instead of only reporting them. */
  strict?: boolean;
  /** Put before syntax error messages; upstream's decoder says this for an unparseable body. */
  messagePrefix?: string;
  /**
   * Record the text of numbers a double does not keep as written (default true); only the typed-body
   * check and the patchers read them, so bodies of other kinds skip the second walk.
   */
  numberTexts?: boolean;
}

export interface ParsedJson {
  value: JsonValue;
  /** Dotted paths of keys seen more than once, in document order (the last value wins). */
  duplicateFields: string[];
}

const utf8 = new TextDecoder('utf-8');

export function parseJson(input: string | Uint8Array, opts: ParseJsonOptions = {}): ParsedJson {
  const text = typeof input === 'string' ? input : utf8.decode(input);
  const r = decodeJSON(text, opts);
  if (r.error !== undefined) throw badRequest((opts.messagePrefix ?? "couldn't get version/kind; json parse error: ") + r.error);
  if (opts.strict && r.duplicateFields.length) throw strictDecodingError(r.duplicateFields.map(strictDuplicateField));
  return { value: r.value as JsonValue, duplicateFields: r.duplicateFields };
}

/** runtime.NewStrictDecodingError as a 400: `strict decoding error: unknown field "x", duplicate field "y"`. */
export function strictDecodingError(messages: readonly string[]): StatusError {
  return badRequest(`strict decoding error: ${messages.join(', ')}`);
}

/** runtime.NewMissingKindErr, for a body that parses but has no kind. */
export function missingKindError(body: string): StatusError {
  return badRequest(`Object 'Kind' is missing in '${body}'`);
}
