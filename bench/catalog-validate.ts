// Child of bench/catalog.ts: loads and validates one catalog directory as `kplane catalog validate`
// does (loadFS → convertToModel → validateModel) and prints the phase times and this process's
// peak RSS as one JSON line. Its own process, so the peak RSS is the validation's alone.
//   node --import tsx bench/catalog-validate.ts DIR
import { loadFS } from '../src/catalog/declcfg/load.js';
import { convertToModel } from '../src/catalog/model/convert.js';
import { validateModel } from '../src/catalog/model/validate.js';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: catalog-validate.ts DIR\n');
  process.exit(2);
}
const t0 = performance.now();
const cfg = await loadFS(dir);
const t1 = performance.now();
const model = convertToModel(cfg);
const t2 = performance.now();
const err = validateModel(model);
const t3 = performance.now();
process.stdout.write(
  JSON.stringify({
    bundles: cfg.bundles.length,
    packages: cfg.packages.length,
    valid: err === undefined,
    loadMs: t1 - t0,
    convertMs: t2 - t1,
    validateMs: t3 - t2,
    totalMs: t3 - t0,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  }) + '\n',
);
