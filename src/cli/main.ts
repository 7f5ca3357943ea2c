// kplane: the command line. Dispatch only: each command's module is loaded when it runs, so that
// `kplane catalog ...` or `kplane backup` does not load the server (serve.ts's imports) first.
import { disableAllocationSitePretenuring } from '../runtime/v8-pretenuring.js';

// Before any work, so that no allocation site is pretenured first (see runtime/v8-pretenuring.ts).
disableAllocationSitePretenuring();

const COMMANDS_USAGE = `Usage: kplane <command> [flags]

Commands:
  serve                     Run the API server (embedded SQLite by default) with the built-in controllers
  controller-manager        Run the built-in controllers against a server, with leader election
  cloud-controller-manager  Run the cloud controllers over a cloud provider (kplane cloud-controller-manager --help)
  ccm-test                  Run the CCM test kit against a cluster; env up/down for a local one (kplane ccm-test --help)
  node-sim                  Simulated Nodes whose Pods serve on loopback addresses (kplane node-sim --help)
  backup                    Copy the SQLite database while it serves (kplane backup --help)
  restore                   Restore a backup into a data directory (kplane restore --help)
  catalog                   Operator catalogs: render, validate and serve file-based catalogs (kplane catalog --help)
  upgrade-check             Whether stored data lets an older kplane run (kplane upgrade-check --help)
  version                   Print the version

`;

/** The whole help text: the commands, then serve's flags (which load serve.ts). */
async function usage(): Promise<string> {
  const { SERVE_USAGE } = await import('./serve.js');
  return COMMANDS_USAGE + SERVE_USAGE;
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2);
  switch (cmd) {
    case 'serve': {
      const { serve } = await import('./serve.js');
      return serve(rest, COMMANDS_USAGE);
    }
    case 'controller-manager': {
      const { controllerManager } = await import('./controller-manager.js');
      return controllerManager(rest);
    }
    case 'cloud-controller-manager': {
      const { cloudControllerManager } = await import('./cloud-controller-manager.js');
      return cloudControllerManager(rest);
    }
    case 'ccm-test': {
      const { ccmTestMain } = await import('./ccm-test.js');
      return ccmTestMain(rest);
    }
    case 'node-sim': {
      const { nodeSim } = await import('./node-sim.js');
      return nodeSim(rest);
    }
    case 'backup':
    case 'restore': {
      const cli = await import('./backup.js');
      process.exitCode = await (cmd === 'backup' ? cli.backup(rest) : cli.restore(rest));
      return;
    }
    case 'catalog': {
      // The live interoperability test needs a control plane, which the catalog layer cannot start.
      if (rest[0] === 'test' && rest[1] === 'interop') {
        const { catalogTestInterop } = await import('./catalog-interop.js');
        process.exitCode = await catalogTestInterop(rest.slice(2));
        return;
      }
      const { catalog } = await import('../catalog/cli.js');
      // Only `catalog test --install` loads a control plane.
      const installLayer = async (catalogDir: string, progress: (line: string) => void) =>
        (await import('../controlplane/catalog-interop.js')).runInteropInstall({ catalogDir, progress });
      process.exitCode = await catalog(rest, { installLayer });
      return;
    }
    case 'upgrade-check': {
      const { upgradeCheck } = await import('./upgrade-check.js');
      process.exitCode = await upgradeCheck(rest);
      return;
    }
    case 'version':
      process.stdout.write('kplane 0.1.0\n');
      return;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(await usage());
      return;
    default:
      process.stderr.write(`kplane: unknown command "${cmd}"\n\n${await usage()}\n`);
      process.exit(2);
  }
}

/** An example value for each flag an error message may point at. */
const FLAG_EXAMPLES: Record<string, string> = { '--secure-port': '16443', '--data-dir': '.kplane-2', '--bind-address': '127.0.0.1' };

/**
 * Run as `npm start` (npm sets npm_lifecycle_event), flags go after `--`: an error that names a
 * `kplane serve` flag says so, with the command to type.
 */
function npmHint(msg: string): string {
  const script = process.env.npm_lifecycle_event;
  const flag = /kplane serve (--[a-z-]+)/.exec(msg)?.[1];
  if (!script || !flag || !(flag in FLAG_EXAMPLES)) return '';
  return `kplane: through npm, flags go after "--": ${script === 'start' ? 'npm start' : `npm run ${script}`} -- ${flag} ${FLAG_EXAMPLES[flag]}\n`;
}

main().catch((e: unknown) => {
  const msg = e instanceof Error ? e.message : String(e);
  process.stderr.write(`kplane: ${msg}\n${npmHint(msg)}`);
  process.exit(1);
});
