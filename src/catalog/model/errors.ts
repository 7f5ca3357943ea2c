// Errors of the catalog model: the validation error tree (operator-registry's alpha/model/error.go)
// and the plain errors of converting a DeclarativeConfig into a model.

/** A failure converting FBC blobs into a model: one message, as opm words it. */
export class ModelConversionError extends Error {
  override readonly name = 'ModelConversionError';
  readonly code = 'KPL_ERR_CATALOG_CONVERT';
}

/**
 * A node of opm's validation error tree: a summary ("invalid package \"foo\"") and the problems found
 * under it, each either a plain Error (a leaf) or another ValidationError. Printed as opm prints it:
 *
 *   invalid index:
 *   └── invalid package "foo":
 *       ├── default channel must be set
 *       └── invalid channel "alpha":
 *           └── channel must contain at least one bundle
 *
 * Validators collect sub-errors first and call orUndefined() last, which fixes the message.
 */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  readonly code = 'KPL_ERR_CATALOG_INVALID';
  readonly subErrors: Error[];

  constructor(
    readonly summary: string,
    subErrors: Error[] = [],
  ) {
    super(summary);
    this.subErrors = subErrors;
  }

  /** This error when it holds any sub-error (its message then being the printed tree), else undefined. */
  orUndefined(): ValidationError | undefined {
    if (this.subErrors.length === 0) return undefined;
    this.message = this.format();
    return this;
  }

  /** The printed tree, trimmed like opm's Error(). A node reached again through a cycle is left out. */
  format(): string {
    return formatNode(this, '', true, []).trim();
  }
}

function formatNode(v: ValidationError, prefix: string, last: boolean, seen: ValidationError[]): string {
  if (seen.includes(v)) return '';
  seen = [...seen, v];
  let out = `${prefix}${v.summary}${v.subErrors.length === 0 ? '\n' : ':\n'}`;
  v.subErrors.forEach((sub, i) => {
    // The last four characters of the prefix are this node's own branch; its children see either
    // blank space (this node was the last child) or a continuing vertical line.
    let subPrefix = prefix;
    if ([...subPrefix].length >= 4) subPrefix = [...subPrefix].slice(0, -4).join('') + (last ? '    ' : '│   ');
    const subLast = i === v.subErrors.length - 1;
    subPrefix += subLast ? '└── ' : '├── ';
    if (sub instanceof ValidationError) out += formatNode(sub, subPrefix, subLast, seen);
    else out += `${subPrefix}${sub.message}\n`;
  });
  return out;
}
