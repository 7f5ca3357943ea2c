// go-yaml v2's words for the YAML mistakes people make in catalog files. The full parser used for
// documents the fast reader gives up on reports its own messages; for the common mistakes this
// turns them into the message (and line) go-yaml gives, which is what opm prints. go-yaml numbers
// lines its own way: a scanner error names the 1-based line of the offending character, a parser
// error the 0-based line of the offending token, and neither is shown when that number is 0.
// Mistakes not recognised keep the full parser's message.

export interface ParserError {
  code: string;
  message: string;
  /** offset of the problem in the document */
  offset: number;
}

function lineIndex(doc: string, offset: number): number {
  let n = 0;
  for (let i = doc.indexOf('\n'); i >= 0 && i < offset; i = doc.indexOf('\n', i + 1)) n++;
  return n;
}

function scannerError(doc: string, offset: number, msg: string): string {
  const line = lineIndex(doc, offset);
  return line === 0 ? `yaml: ${msg}` : `yaml: line ${line + 1}: ${msg}`;
}

function parserError(line0: number, msg: string): string {
  return line0 === 0 ? `yaml: ${msg}` : `yaml: line ${line0}: ${msg}`;
}

/** The 0-based line where the stream ends. */
function endLine(doc: string): number {
  return lineIndex(doc, doc.length);
}

/** The next `:` that is a mapping value indicator (followed by space, newline or the end) from offset. */
function nextValueIndicator(doc: string, offset: number): number {
  for (let i = doc.indexOf(':', offset); i >= 0; i = doc.indexOf(':', i + 1)) {
    const c = doc[i + 1];
    if (c === undefined || c === ' ' || c === '\n' || c === '\r' || c === '\t') return i;
  }
  return -1;
}

function lineAt(doc: string, offset: number): { start: number; text: string; indent: number } {
  const start = doc.lastIndexOf('\n', offset - 1) + 1;
  let end = doc.indexOf('\n', offset);
  if (end < 0) end = doc.length;
  const text = doc.slice(start, end);
  return { start, text, indent: text.length - text.trimStart().length };
}

/** The text of the nearest line above offset's line with content (not a comment). */
function previousContentLine(doc: string, offset: number): string | undefined {
  let i = lineAt(doc, offset).start - 1;
  while (i > 0) {
    const prev = lineAt(doc, i);
    const t = prev.text.trim();
    if (t !== '' && !t.startsWith('#')) return prev.text;
    i = prev.start - 1;
  }
  return undefined;
}

const isEntry = (t: string): boolean => t === '-' || t.startsWith('- ');

/**
 * Whether the block collection the line at offset should belong to is a sequence with its own
 * indentation (a sequence at the column of its parent mapping's keys leaves the mapping in charge).
 */
function inSequence(doc: string, offset: number): boolean {
  const here = lineAt(doc, offset);
  let i = here.start - 1;
  let seqIndent = -1;
  while (i > 0) {
    const prev = lineAt(doc, i);
    const t = prev.text.trim();
    i = prev.start - 1;
    if (t === '' || t.startsWith('#')) continue;
    if (seqIndent < 0) {
      if (prev.indent > here.indent) continue;
      if (!isEntry(t)) return false;
      seqIndent = prev.indent;
      continue;
    }
    // above the sequence: its parent decides
    if (prev.indent < seqIndent) return true;
    if (prev.indent === seqIndent && !isEntry(t)) return false;
  }
  return seqIndent >= 0;
}

/** The indentation of the nearest line above with content that is not deeper than the line at offset. */
function enclosingIndent(doc: string, offset: number): number {
  const here = lineAt(doc, offset);
  let i = here.start - 1;
  while (i > 0) {
    const prev = lineAt(doc, i);
    const t = prev.text.trim();
    if (t !== '' && !t.startsWith('#') && prev.indent <= here.indent) return prev.indent;
    i = prev.start - 1;
  }
  return 0;
}

/** go-yaml's message for the full parser's first error, when the mistake is one it knows. */
export function goYAMLError(doc: string, e: ParserError): string | undefined {
  const at = e.offset;
  const c = doc[at];
  switch (e.code) {
    case 'BAD_SCALAR_START':
      return scannerError(doc, at, 'found character that cannot start any token');
    case 'TAB_AS_INDENT': {
      // a tab starting the line after a plain scalar is caught while that scalar is scanned
      const prev = previousContentLine(doc, at);
      if (prev !== undefined && !prev.endsWith(':') && !/^- *$/.test(prev.trim())) {
        return scannerError(doc, at, 'found a tab character that violates indentation');
      }
      return scannerError(doc, at, 'found character that cannot start any token');
    }
    case 'BAD_ALIAS':
      return scannerError(doc, at, 'did not find expected alphabetic or numeric character');
    case 'BAD_DQ_ESCAPE':
      return scannerError(doc, at, 'found unknown escape character');
    case 'MISSING_CHAR':
      if (/^Missing closing ["']quote/.test(e.message)) return scannerError(doc, doc.length, 'found unexpected end of stream');
      if (/^Implicit (map )?keys need to be followed by map values/.test(e.message)) return couldNotFindColon(doc, at);
      if (/^Missing , or ] in flow sequence|must end with a \]/.test(e.message)) return parserError(lineIndex(doc, at), "did not find expected ',' or ']'");
      if (/^Missing , or } in flow map|must end with a \}/.test(e.message)) return parserError(lineIndex(doc, at), "did not find expected ',' or '}'");
      if (/^Sequence item without - indicator/.test(e.message)) {
        return parserError(lineIndex(doc, at), inSequence(doc, at) ? "did not find expected '-' indicator" : 'did not find expected key');
      }
      return undefined;
    case 'BLOCK_AS_IMPLICIT_KEY': {
      if (/^A block sequence may not be used as an implicit map key/.test(e.message)) {
        // a sequence entry starting its own line where the mapping wants its next key
        const dash = doc.indexOf('-', at);
        return parserError(lineIndex(doc, dash < 0 ? at : dash), 'did not find expected key');
      }
      if (c === '?') return scannerError(doc, at, 'mapping keys are not allowed in this context');
      if (c === '-') return scannerError(doc, at, 'block sequence entries are not allowed in this context');
      const colon = nextValueIndicator(doc, at);
      return colon < 0 ? undefined : scannerError(doc, colon, 'mapping values are not allowed in this context');
    }
    case 'MULTILINE_IMPLICIT_KEY': {
      if (c === '-' && (doc[at + 1] === ' ' || doc[at + 1] === '\n' || doc[at + 1] === undefined)) {
        return parserError(lineIndex(doc, at), 'did not find expected key');
      }
      const colon = nextValueIndicator(doc, at);
      return colon < 0 ? undefined : scannerError(doc, colon, 'mapping values are not allowed in this context');
    }
    case 'UNEXPECTED_TOKEN': {
      if (c === '-' && (doc[at + 1] === ' ' || doc[at + 1] === '\n' || doc[at + 1] === undefined)) {
        const line = lineAt(doc, at);
        if (line.text.slice(0, at - line.start).trim() !== '') return scannerError(doc, at, 'block sequence entries are not allowed in this context');
      }
      if (/^Unexpected , in flow/.test(e.message)) return parserError(lineIndex(doc, at), 'did not find expected node content');
      if (/^Unexpected scalar at node end/.test(e.message) || /^Unexpected (flow|block)/.test(e.message)) {
        const line = lineAt(doc, at);
        const sameLine = line.text.slice(0, at - line.start).trim() !== '';
        if (!sameLine && inSequence(doc, at)) return parserError(lineIndex(doc, at), "did not find expected '-' indicator");
        return parserError(lineIndex(doc, at), 'did not find expected key');
      }
      return undefined;
    }
    case 'BAD_INDENT': {
      if (/^Flow sequence/.test(e.message)) return parserError(lineIndex(doc, at), "did not find expected ',' or ']'");
      if (/^Flow map/.test(e.message)) return parserError(lineIndex(doc, at), "did not find expected ',' or '}'");
      const line = lineAt(doc, at);
      const t = line.text.trim();
      // a plain scalar at the column of its block collection must be a key: go-yaml then wants its ':'
      if (!t.startsWith('- ') && t !== '-' && nextValueIndicator(line.text, 0) < 0 && !/^["'[{|>]/.test(t) && enclosingIndent(doc, at) === line.indent) {
        return couldNotFindColon(doc, at);
      }
      return parserError(lineIndex(doc, at), inSequence(doc, at) ? "did not find expected '-' indicator" : 'did not find expected key');
    }
    default:
      return undefined;
  }
}

/** A plain scalar where a key was due, with no `:` after it: go-yaml notices where the key's line ends. */
function couldNotFindColon(doc: string, at: number): string {
  let next = doc.indexOf('\n', at);
  // the next line with content, or the end of the stream
  while (next >= 0) {
    const l = lineAt(doc, next + 1);
    if (next + 1 >= doc.length) break;
    if (l.text.trim() !== '') break;
    next = doc.indexOf('\n', next + 1);
  }
  const line0 = next < 0 ? endLine(doc) : lineIndex(doc, next + 1);
  return `yaml: line ${line0 + 1}: could not find expected ':'`;
}
