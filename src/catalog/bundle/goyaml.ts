// Bundle files read the way opm reads them: k8s.io/apimachinery's YAMLOrJSONDecoder (JSON when the
// text starts with '{', else the first YAML document, converted by sigs.k8s.io/yaml) and the k8s
// decoder's numbers (int64 kept exact, larger integers float64). The Go encodings are golang/'s.
import { int64OrFloat, parseRawJSON, type RawValue } from '../../golang/json.js';
import { looksLikeJSON, splitYAMLDocuments, yamlToJSON } from '../../golang/yaml-read.js';

/** The first document of a file as the decoder yields it, or an error (the file is then skipped). */
export type FirstDocument = { kind: 'json'; value: RawValue } | { kind: 'yaml'; value: unknown } | { kind: 'empty' };

/** The first document of a YAML or JSON stream (opm decodes only the first one of each file). */
export function firstDocument(text: string): FirstDocument {
  // opm's decodeFileFS gives the decoder a 30-byte buffer to guess from
  if (looksLikeJSON(text, 30)) return { kind: 'json', value: parseRawJSON(text, false) };
  const chunk = splitYAMLDocuments(text, true)[0];
  if (chunk === undefined) return { kind: 'empty' };
  return { kind: 'yaml', value: yamlToValue(chunk) };
}

/** One YAML document as sigs.k8s.io/yaml converts it, read back by the k8s decoder. */
export function yamlToValue(chunk: string): unknown {
  try {
    return yamlToJSON(chunk, { int: int64OrFloat });
  } catch (e) {
    throw new Error(`error converting YAML to JSON: ${(e as Error).message}`, { cause: e });
  }
}
