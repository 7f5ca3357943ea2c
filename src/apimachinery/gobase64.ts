// Go's base64.StdEncoding.Decode as encoding/json applies it to a []byte field, for the errors and
// bytes kube-apiserver's decoder gives: \r and \n are skipped anywhere, padding is required,
// trailing bits are ignored (not Strict), and error offsets count UTF-8 bytes of the text.

const DECODE = new Int16Array(256).fill(-1);
for (let i = 0; i < 64; i++) DECODE['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
/** Newline-free, correctly padded: decodes as is (the common case, checked without a loop). */
const PLAIN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CR = 13;
const LF = 10;
const PAD = 61; // '='

/**
 * The offset Go's CorruptInputError reports ("illegal base64 data at input byte N"), or -1 when the
 * text decodes. A port of decodeQuantum's checks; nothing is allocated for plain input.
 */
export function base64ErrorOffset(text: string): number {
  if (PLAIN.test(text)) return -1;
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

/** The decoded bytes, or the error offset (see base64ErrorOffset). */
export function decodeStdBase64(text: string): Buffer | number {
  const at = base64ErrorOffset(text);
  if (at >= 0) return at;
  // Valid for Go: without its newlines it is standard padded base64, which Node decodes the same.
  return Buffer.from(PLAIN.test(text) ? text : text.replace(/[\r\n]/g, ''), 'base64');
}
