// A fast reader for the block-style YAML that catalogs are written in (what opm's WriteYAML and
// people write by hand): block mappings and sequences, plain, quoted and literal scalars, comments,
// empty flow collections. It gives what go-yaml v2 gives for those documents; for anything else
// (anchors, tags, flow collections with content, folded scalars, tabs, complex keys, syntax errors)
// it gives up and the caller uses the full parser. Catalog files of tens of megabytes are common, and
// a general YAML parser reads them at a few MB/s.

import { setMember } from './json.js';

/** Returned when the document uses something this reader does not handle. */
export const UNSUPPORTED: unique symbol = Symbol('unsupported YAML');

class Unsupported extends Error {}

interface Line {
  indent: number;
  /** the line without its indentation */
  text: string;
}

/**
 * The value of one YAML document, or UNSUPPORTED. resolvePlain turns a plain scalar into a value
 * (go-yaml v2's rules live with the caller); keys must resolve to strings.
 */
export function parseBlockYAML(doc: string, resolvePlain: (s: string) => unknown): unknown {
  // tabs, CR and the YAML 1.1 line breaks (NEL, LS, PS) take the full parser
  if (/[\t\r\u0085\u2028\u2029]/.test(doc) || doc.charCodeAt(0) === 0xfeff) return UNSUPPORTED;
  try {
    return new Reader(doc, resolvePlain).document();
  } catch (e) {
    if (e instanceof Unsupported) return UNSUPPORTED;
    throw e;
  }
}

const bail = (): never => {
  throw new Unsupported();
};

function isBlankOrComment(text: string): boolean {
  return text === '' || text.charCodeAt(0) === 0x23; /* # */
}

// Characters that cannot start a plain scalar in block context (or that need the full parser).
const PLAIN_START_BAD = new Set(['#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`', '?', ':', '-']);

class Reader {
  private readonly lines: Line[];
  private readonly endsWithNewline: boolean;
  private i = 0;

  constructor(
    doc: string,
    private readonly resolvePlain: (s: string) => unknown,
  ) {
    this.endsWithNewline = doc.endsWith('\n');
    const raw = doc.split('\n');
    if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
    this.lines = raw.map((l) => {
      let k = 0;
      while (k < l.length && l.charCodeAt(k) === 0x20) k++;
      return { indent: k, text: l.slice(k) };
    });
    // a leading document marker (the reader keeps the first `---` of a stream)
    if (this.lines.length > 0 && this.lines[0]!.indent === 0 && this.lines[0]!.text.startsWith('---')) {
      const rest = this.lines[0]!.text.slice(3).trim();
      if (rest !== '' && !rest.startsWith('#')) bail();
      this.lines[0] = { indent: 0, text: '' };
    }
    for (const l of this.lines) {
      if (l.indent === 0 && (l.text.startsWith('---') || l.text.startsWith('...') || l.text.startsWith('%'))) bail();
    }
  }

  document(): unknown {
    this.skipBlank();
    if (this.i >= this.lines.length) return null;
    const first = this.lines[this.i]!;
    let v: unknown;
    if (this.isSeqItem(first.text)) v = this.sequence(first.indent);
    else if (this.mappingKey(first.text) !== undefined) v = this.mapping(first.indent);
    else bail();
    this.skipBlank();
    if (this.i < this.lines.length) {
      // content left of an indented root starts another (implicit) document, which go-yaml's
      // Unmarshal never reads; anything else left over is a syntax error for the full parser
      if (first.indent > 0 && this.lines[this.i]!.indent < first.indent) return v;
      bail();
    }
    return v;
  }

  private skipBlank(): void {
    while (this.i < this.lines.length && isBlankOrComment(this.lines[this.i]!.text)) this.i++;
  }

  private isSeqItem(text: string): boolean {
    return text === '-' || text.startsWith('- ') || text.startsWith('-#');
  }

  /** [key, rest-after-colon] of a `key: value` line, or undefined when the line is no mapping entry. */
  private mappingKey(text: string): [string, string] | undefined {
    const c = text[0];
    if (c === '"' || c === "'") {
      const [key, end] = c === '"' ? this.inlineDouble(text) : this.inlineSingle(text);
      let j = end;
      while (text.charCodeAt(j) === 0x20) j++;
      if (text[j] !== ':') return undefined;
      const after = text.slice(j + 1);
      if (after !== '' && after[0] !== ' ') return undefined;
      return [key, after];
    }
    if (c === undefined || PLAIN_START_BAD.has(c)) {
      if (c === '-' || c === '?' || c === ':') {
        // "-x: y" is a plain key; "- " and "? " and ": " are not keys
        if (text.length < 2 || text[1] === ' ') return undefined;
      } else return undefined;
    }
    let j = text.indexOf(':');
    while (j >= 0) {
      if (j + 1 === text.length || text[j + 1] === ' ') break;
      j = text.indexOf(':', j + 1);
    }
    if (j < 0) return undefined;
    const rawKey = text.slice(0, j);
    if (rawKey.includes(' #')) return undefined;
    const key = rawKey.replace(/ +$/, '');
    if (key === '') return undefined;
    const resolved = this.resolvePlain(key);
    if (typeof resolved !== 'string' || key === '<<') bail();
    return [key, text.slice(j + 1)];
  }

  /** The next non-blank line, if it sits at column indent: undefined at the end or at a shallower line. */
  private lineAt(indent: number): Line | undefined {
    this.skipBlank();
    if (this.i >= this.lines.length) return undefined;
    const line = this.lines[this.i]!;
    if (line.indent < indent) return undefined;
    if (line.indent > indent) bail();
    return line;
  }

  /** A block mapping whose keys sit at column indent. */
  private mapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let line = this.lineAt(indent); line !== undefined; line = this.lineAt(indent)) {
      if (this.isSeqItem(line.text)) break; // an indentless sequence ends; the caller decides
      const kv = this.mappingKey(line.text);
      if (kv === undefined) bail();
      const [key, rest] = kv!;
      this.i++;
      setMember(out, key, this.value(rest, indent, true));
    }
    return out;
  }

  /** A block sequence whose `-` sit at column indent. */
  private sequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.lineAt(indent); line !== undefined; line = this.lineAt(indent)) {
      if (!this.isSeqItem(line.text)) break;
      const rest = line.text.slice(1);
      let k = 0;
      while (rest.charCodeAt(k) === 0x20) k++;
      const content = rest.slice(k);
      if (content === '' || content.startsWith('#')) {
        this.i++;
        out.push(this.value('', indent, false));
        continue;
      }
      const col = indent + 1 + k;
      if (this.isSeqItem(content) || this.mappingKey(content) !== undefined) {
        // "- key: value" / "- - x": a nested block collection starting on this line
        this.lines[this.i] = { indent: col, text: content };
        out.push(this.isSeqItem(content) ? this.sequence(col) : this.mapping(col));
        continue;
      }
      this.i++;
      out.push(this.value(content, indent, false));
    }
    return out;
  }

  /**
   * The value after `key:` (or `- `): rest is the remainder of the line; parentIndent is the
   * column of the collection the value belongs to (continuation lines must go deeper).
   */
  private value(rest: string, parentIndent: number, inMapping: boolean): unknown {
    let k = 0;
    while (rest.charCodeAt(k) === 0x20) k++;
    const text = rest.slice(k);
    if (text === '' || text.startsWith('#')) {
      if (k === 0 && text.startsWith('#')) bail(); // "key:#" is no comment
      // the value is on the following lines, or absent
      this.skipBlank();
      if (this.i >= this.lines.length) return null;
      const next = this.lines[this.i]!;
      if (next.indent > parentIndent) {
        if (this.isSeqItem(next.text)) return this.sequence(next.indent);
        if (this.mappingKey(next.text) !== undefined) return this.mapping(next.indent);
        // a plain scalar starting on the next line
        this.i++;
        return this.plain(next.text, parentIndent);
      }
      if (inMapping && next.indent === parentIndent && this.isSeqItem(next.text)) return this.sequence(parentIndent);
      return null;
    }
    const c = text[0]!;
    if (c === '"') return this.doubleQuoted(text, parentIndent);
    if (c === "'") return this.singleQuoted(text, parentIndent);
    if (c === '|') return this.literal(text, parentIndent);
    if (c === '[' || c === '{') {
      const m = /^(\[\]|\{\})( +#.*)? *$/.exec(text);
      if (m === null) bail();
      return m![1] === '[]' ? [] : {};
    }
    if (PLAIN_START_BAD.has(c) && !((c === '-' || c === '?' || c === ':') && text.length > 1 && text[1] !== ' ')) bail();
    return this.plain(text, parentIndent);
  }

  /** A plain scalar: this line's text and deeper continuation lines, folded. */
  private plain(first: string, parentIndent: number): unknown {
    let [value, ended] = this.plainLine(first);
    for (;;) {
      // blank lines inside the scalar become newlines; a comment (line or trailing) ends it
      let j = this.i;
      let blanks = 0;
      while (j < this.lines.length && this.lines[j]!.text === '') {
        blanks++;
        j++;
      }
      if (j >= this.lines.length) break;
      const next = this.lines[j]!;
      if (next.indent <= parentIndent) break;
      if (ended || next.text.startsWith('#')) {
        // nothing deeper may follow a comment
        this.i = j;
        this.skipBlank();
        const after = this.lines[this.i];
        if (after !== undefined && after.indent > parentIndent) bail();
        break;
      }
      const [part, hadComment] = this.plainLine(next.text);
      value += blanks > 0 ? '\n'.repeat(blanks) : ' ';
      value += part;
      ended = hadComment;
      this.i = j + 1;
    }
    return this.resolvePlain(value);
  }

  /** One line of a plain scalar, up to a comment, trimmed; `: ` inside is a syntax error here. */
  private plainLine(text: string): [string, boolean] {
    const hash = text.indexOf(' #');
    const s = (hash >= 0 ? text.slice(0, hash) : text).replace(/ +$/, '');
    if (s.includes(': ') || s.endsWith(':')) bail();
    return [s, hash >= 0];
  }

  /**
   * A double-quoted scalar starting at text (which begins with `"`, on a line already consumed),
   * possibly continued on the following lines.
   */
  private doubleQuoted(text: string, parentIndent: number): string {
    let out = '';
    let line = text;
    let pos = 1;
    for (;;) {
      const q = this.scanDouble(line, pos);
      out += q.value;
      if (q.closed) {
        this.afterScalar(line.slice(q.end));
        return out;
      }
      // a line break inside the quotes: folded, unless escaped
      if (!q.escapedBreak) out = out.replace(/ +$/, '');
      const blanks = this.continuation(parentIndent);
      if (!q.escapedBreak) out += blanks > 0 ? '\n'.repeat(blanks) : ' ';
      else out += '\n'.repeat(blanks);
      line = this.lines[this.i]!.text;
      this.i++;
      pos = 0;
    }
  }

  /** Skips the empty lines inside a quoted scalar (returns how many) up to its next line, which must be deeper. */
  private continuation(parentIndent: number): number {
    let blanks = 0;
    while (this.i < this.lines.length && this.lines[this.i]!.text === '') {
      blanks++;
      this.i++;
    }
    if (this.i >= this.lines.length) bail();
    if (this.lines[this.i]!.indent <= parentIndent) bail();
    return blanks;
  }

  private scanDouble(line: string, start: number): { value: string; closed: boolean; end: number; escapedBreak: boolean } {
    let value = '';
    let j = start;
    let run = start;
    while (j < line.length) {
      const c = line.charCodeAt(j);
      if (c === 0x22) {
        value += line.slice(run, j);
        return { value, closed: true, end: j + 1, escapedBreak: false };
      }
      if (c === 0x5c) {
        value += line.slice(run, j);
        if (j + 1 >= line.length) return { value, closed: false, end: j, escapedBreak: true };
        const e = line[j + 1]!;
        let len = 2;
        switch (e) {
          case '0':
            value += '\0';
            break;
          case 'a':
            value += '\x07';
            break;
          case 'b':
            value += '\b';
            break;
          case 't':
            value += '\t';
            break;
          case 'n':
            value += '\n';
            break;
          case 'v':
            value += '\v';
            break;
          case 'f':
            value += '\f';
            break;
          case 'r':
            value += '\r';
            break;
          case 'e':
            value += '\x1b';
            break;
          case ' ':
            value += ' ';
            break;
          case '"':
            value += '"';
            break;
          case '/':
            value += '/';
            break;
          case '\\':
            value += '\\';
            break;
          case 'N':
            value += '\x85';
            break;
          case '_':
            value += '\xa0';
            break;
          case 'L':
            value += '\u2028';
            break;
          case 'P':
            value += '\u2029';
            break;
          case 'x':
          case 'u':
          case 'U': {
            const width = e === 'x' ? 2 : e === 'u' ? 4 : 8;
            const hex = line.slice(j + 2, j + 2 + width);
            if (hex.length !== width || !/^[0-9a-fA-F]+$/.test(hex)) bail();
            const cp = parseInt(hex, 16);
            if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) bail();
            value += String.fromCodePoint(cp);
            len = 2 + width;
            break;
          }
          default:
            bail();
        }
        j += len;
        run = j;
        continue;
      }
      j++;
    }
    value += line.slice(run);
    return { value, closed: false, end: line.length, escapedBreak: false };
  }

  /** A single-quoted scalar starting at text (which begins with `'`), possibly over several lines. */
  private singleQuoted(text: string, parentIndent: number): string {
    let out = '';
    let line = text;
    let pos = 1;
    for (;;) {
      const [v, end, closed] = this.scanSingle(line, pos);
      out += v;
      if (closed) {
        this.afterScalar(line.slice(end));
        return out;
      }
      out = out.replace(/ +$/, '');
      const blanks = this.continuation(parentIndent);
      out += blanks > 0 ? '\n'.repeat(blanks) : ' ';
      line = this.lines[this.i]!.text;
      this.i++;
      pos = 0;
    }
  }

  private scanSingle(line: string, start: number): [string, number, boolean] {
    let value = '';
    let j = start;
    for (;;) {
      const q = line.indexOf("'", j);
      if (q < 0) return [value + line.slice(j), line.length, false];
      value += line.slice(j, q);
      if (line[q + 1] === "'") {
        value += "'";
        j = q + 2;
        continue;
      }
      return [value, q + 1, true];
    }
  }

  /** A quoted scalar on one line used as a key: [value, index after the closing quote]. */
  private inlineDouble(text: string): [string, number] {
    const q = this.scanDouble(text, 1);
    if (!q.closed) bail();
    return [q.value, q.end];
  }

  private inlineSingle(text: string): [string, number] {
    const [v, end, closed] = this.scanSingle(text, 1);
    if (!closed) bail();
    return [v, end];
  }

  /** After a closing quote: only spaces and a comment may follow on the line. */
  private afterScalar(rest: string): void {
    if (rest === '') return;
    if (!/^ +(#.*)?$/.test(rest)) bail();
  }

  /** A literal block scalar (`|`, `|-`, `|+`, with an optional indentation digit). */
  private literal(header: string, parentIndent: number): string {
    const m = /^\|([1-9]?)([+-]?)([1-9]?)( +#.*)? *$/.exec(header);
    if (m === null || (m[1] !== '' && m[3] !== '')) bail();
    const digit = m![1] || m![3];
    const chomp = m![2];
    let indent = digit !== '' ? parentIndent + Number(digit) : 0;
    if (indent === 0) {
      // the first non-empty line sets the indentation (at least one deeper than the parent)
      let j = this.i;
      let maxBlank = 0;
      while (j < this.lines.length && this.lines[j]!.text === '') {
        maxBlank = Math.max(maxBlank, this.lines[j]!.indent);
        j++;
      }
      const firstIndent = j < this.lines.length ? this.lines[j]!.indent : 0;
      indent = Math.max(firstIndent, maxBlank, parentIndent + 1, 1);
      if (maxBlank > firstIndent && j < this.lines.length) bail();
    }
    const parts: string[] = [];
    let trailing = 0; // line breaks after the last content line
    let sawContent = false;
    while (this.i < this.lines.length) {
      const l = this.lines[this.i]!;
      if (l.text === '') {
        if (l.indent > indent) {
          // spaces beyond the indentation are content
          parts.push('\n'.repeat(trailing) + ' '.repeat(l.indent - indent));
          trailing = 1;
          sawContent = true;
        } else trailing++;
        this.i++;
        continue;
      }
      if (l.indent < indent) break;
      parts.push((sawContent ? '\n'.repeat(trailing) : '\n'.repeat(trailing)) + ' '.repeat(l.indent - indent) + l.text);
      trailing = 1;
      sawContent = true;
      this.i++;
    }
    // the last line of a document without a final newline has no line break after it
    if (this.i === this.lines.length && !this.endsWithNewline && this.lines.length > 0) trailing = Math.max(0, trailing - 1);
    const body = parts.join('');
    if (!sawContent) {
      // only empty lines
      return chomp === '+' ? '\n'.repeat(trailing) : '';
    }
    if (chomp === '-') return body;
    if (chomp === '+') return body + '\n'.repeat(trailing);
    return trailing > 0 ? body + '\n' : body;
  }
}
