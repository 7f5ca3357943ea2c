// `kplane catalog ...`: dispatch to one module per subcommand under ./cli/.
// Each module exports `run(argv): Promise<number>` (the exit code) and `usage` (one help text).

import type { CatalogCliHooks } from './cli/test.js';

interface Command {
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number>; usage: string }>;
}

const COMMANDS: Record<string, Command> = {
  'render-template': { summary: 'Render a semver template into a file-based catalog', load: () => import('./cli/render-template.js') },
  'render-veneer': { summary: 'Alias of render-template', load: () => import('./cli/render-template.js') },
  render: { summary: 'Render bundles, catalogs and images into a file-based catalog', load: () => import('./cli/render.js') },
  validate: { summary: 'Validate a file-based catalog directory (as opm validate)', load: () => import('./cli/validate.js') },
  serve: { summary: 'Serve a catalog over the registry gRPC API', load: () => import('./cli/serve.js') },
  generate: { summary: 'generate dockerfile DIR, or render every veneer of a catalog repository', load: () => import('./cli/generate.js') },
  bundle: { summary: 'bundle build/push: build a bundle directory into an OCI image', load: () => import('./cli/bundle.js') },
  init: { summary: 'Lay out a catalog repository', load: () => import('./cli/init.js') },
  'add-operator': { summary: 'Add an operator to a catalog repository', load: () => import('./cli/add-operator.js') },
  'add-bundle': { summary: "Add a bundle to an operator's template", load: () => import('./cli/add-bundle.js') },
  test: { summary: 'Run the sanity, integration and interoperability layers', load: () => import('./cli/test.js') },
};

export function catalogUsage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(width)}${c.summary}`);
  return `Usage: kplane catalog <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun "kplane catalog <command> --help" for a command's flags.\n`;
}

export async function catalog(argv: string[], hooks: CatalogCliHooks = {}): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    process.stdout.write(catalogUsage());
    return 0;
  }
  const c = COMMANDS[cmd];
  if (!c) {
    process.stderr.write(`kplane catalog: unknown command "${cmd}"\n\n${catalogUsage()}`);
    return 2;
  }
  const mod = await c.load();
  if (rest.includes('-h') || rest.includes('--help')) {
    process.stdout.write(mod.usage);
    return 0;
  }
  // `test --install` runs a layer that needs what the caller passes in.
  return cmd === 'test' ? (await import('./cli/test.js')).run(rest, hooks) : mod.run(rest);
}
