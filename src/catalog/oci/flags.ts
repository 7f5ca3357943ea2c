// The registry flags every image-reading command shares (bundle pull/push, render, render-template),
// as node:util parseArgs options plus the function that turns their values into pull options.
import { parseCreds } from './auth.js';
import type { Credentials } from './auth.js';
import { parsePlatform } from './manifest.js';
import type { Platform } from './manifest.js';
import { progressPrinter } from './progress.js';
import type { ProgressMode, PullProgress } from './progress.js';

export const registryFlagOptions = {
  'cache-dir': { type: 'string' },
  'use-http': { type: 'boolean' },
  creds: { type: 'string' },
  username: { type: 'string' },
  password: { type: 'string' },
  authfile: { type: 'string' },
  platform: { type: 'string' },
  progress: { type: 'string' },
} as const;

export const registryFlagsUsage = `Registry flags:
      --cache-dir DIR       content cache (default $KPLANE_CACHE_DIR, else ~/.cache/kplane)
      --use-http            plain HTTP (loopback registries use it anyway)
      --creds USER:PASSWORD credentials (default: REGISTRY_AUTH_FILE, else ~/.docker/config.json)
      --username, --password
      --authfile FILE       a docker config.json / containers auth.json to read credentials from
      --platform OS/ARCH    which image of a manifest list (default: this machine's, then linux/amd64)
      --progress MODE       auto (on a terminal only), tty, plain or none
`;

export interface RegistryFlagValues {
  'cache-dir'?: string | undefined;
  'use-http'?: boolean | undefined;
  creds?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  authfile?: string | undefined;
  platform?: string | undefined;
  progress?: string | undefined;
}

export interface RegistryFlagOptions {
  cacheDir?: string;
  insecure?: boolean;
  /** --skip-tls-verify (render, render-template): for the registry clients only. */
  skipTLSVerify?: boolean;
  credentials?: Credentials;
  authFile?: string;
  platform?: Platform;
  progress?: (e: PullProgress) => void;
}

/** Flag values → options for pullImage/pushImage; throws (with a message for the user) on bad values. */
export function registryOptionsFromFlags(v: RegistryFlagValues): RegistryFlagOptions {
  const out: RegistryFlagOptions = {};
  if (v['cache-dir']) out.cacheDir = v['cache-dir'];
  if (v['use-http']) out.insecure = true;
  if (v.creds !== undefined) out.credentials = parseCreds(v.creds);
  else if (v.username !== undefined) out.credentials = { username: v.username, password: v.password ?? '' };
  if (v.authfile) out.authFile = v.authfile;
  if (v.platform) out.platform = parsePlatform(v.platform);
  const mode = (v.progress ?? 'auto') as ProgressMode;
  if (!['auto', 'tty', 'plain', 'none'].includes(mode)) throw new Error(`--progress must be auto, tty, plain or none, not "${v.progress}"`);
  const printer = progressPrinter(mode);
  if (printer) out.progress = printer;
  return out;
}
