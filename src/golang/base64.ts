// Go's base64.StdEncoding.Decode as encoding/json applies it to a []byte field, for the errors and
// bytes kube-apiserver's decoder gives: \r and \n are skipped anywhere, padding is required,
// trailing bits are ignored (not Strict), and error offsets count UTF-8 bytes of the text.

const DECODE = new Int16Array(256).fill(-1);
for (let i = 0; i < 64; i++) DECODE['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
/**
 * Newline-free, correctly padded: decodes as is (the common case, checked without a loop). With the
 * length a multiple of 4, at most two trailing '=' can only be "xx==" or "xxx="; one character
 * class is twice as fast for V8 as quantums of four.
 */
const PLAIN_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const isPlain = (text: string): boolean => text.length % 4 === 0 && PLAIN_RE.test(text);
const CR = 13;
const LF = 10;
const PAD = 61; // '='

/**
 * The offset Go's CorruptInputError reports ("illegal base64 data at input byte N"), or -1 when the
 * text decodes. A port of decodeQuantum's checks; nothing is allocated for plain input.
 */
export function base64ErrorOffset(text: string): number {
  if (isPlain(text)) return -1;
  const src = Buffer.from(text, 'utf8');
  let si = 0;
  while (si < src.length) {
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? -1 : si - j; // an incomplete quantum: padding missing
      const c = src[si++]!;
      if (DECODE[c]! >= 0) continue;
      if (c === LF || c === CR) {
        j--;
        continue;
      }
      if (c !== PAD || j < 2) return si - 1; // a foreign byte, or padding too early
      if (j === 2) {
        // "==" is expected; the first '=' is consumed.
        while (si < src.length && (src[si] === LF || src[si] === CR)) si++;
        if (si === src.length) return src.length;
        if (src[si] !== PAD) return si - 1;
        si++;
      }
      while (si < src.length && (src[si] === LF || src[si] === CR)) si++;
      return si < src.length ? si : -1; // anything after the padding is an error
    }
  }
  return -1;
}

/** base64.CorruptInputError.Error(): the text for an error offset (see base64ErrorOffset). */
export function corruptInputError(offset: number): string {
  return `illegal base64 data at input byte ${offset}`;
}

/** base64.StdEncoding.DecodeString's error text for text, or undefined when it decodes. */
export function base64Error(text: string): string | undefined {
  const at = base64ErrorOffset(text);
  return at < 0 ? undefined : corruptInputError(at);
}

/** The decoded bytes, or the error offset (see base64ErrorOffset). */
export function decodeStdBase64(text: string): Buffer | number {
  const at = base64ErrorOffset(text);
  if (at >= 0) return at;
  // Valid for Go: without its newlines it is standard padded base64, which Node decodes the same.
  return Buffer.from(isPlain(text) ? text : text.replace(/[\r\n]/g, ''), 'base64');
}

/**
 * The value as Go writes the decoded bytes back (base64.StdEncoding.EncodeToString): the text
 * itself when it is already that (checked without decoding), else the re-encoded bytes; or the
 * error offset (see base64ErrorOffset).
 */
export function canonicalStdBase64(text: string): string | number {
  const n = text.length;
  if (isPlain(text)) {
    // Canonical unless the last quantum's unused low bits are set ("YR==" decodes as "YQ==").
    if (n === 0 || text.charCodeAt(n - 1) !== PAD) return text;
    const twoPads = text.charCodeAt(n - 2) === PAD;
    if ((DECODE[text.charCodeAt(twoPads ? n - 3 : n - 2)]! & (twoPads ? 0x0f : 0x03)) === 0) return text;
  }
  const r = decodeStdBase64(text);
  return typeof r === 'number' ? r : r.toString('base64');
}
