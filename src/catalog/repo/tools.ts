// What the repository workflow needs from the rest of the catalog toolkit, as one value: the
// semver template renderer (bundles pulled through the image client), the FBC reader and writer,
// and model validation. generate and test take it as an argument, so their tests can pass fakes.
import type { DeclarativeConfig } from '../declcfg/types.js';

export interface CatalogTools {
  /** renders a semver template (the text of a veneer.yaml) into a file-based catalog */
  renderTemplate(text: string): Promise<DeclarativeConfig>;
  /** the catalog.yaml text of a config, as `opm render-template ... -o yaml` prints it */
  writeYAML(cfg: DeclarativeConfig): string;
  /** loads an FBC directory, honouring .indexignore, as opm */
  loadFS(dir: string): Promise<DeclarativeConfig>;
  /** converts to the model and validates it; throws opm's error (its message is the printed tree) */
  validate(cfg: DeclarativeConfig): void;
}
