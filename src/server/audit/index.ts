// Auditing as kube-apiserver's flags set it up (options/audit.go): a policy file and a log
// backend; with only one of the two nothing is audited.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Registry } from 'prom-client';
import { AUDIT_LOG_FORMATS, AUDIT_LOG_MODES, AuditMetrics, createLogBackend, type AuditLogOptions } from './backend.js';
import type { AuditRuntime } from './context.js';
import { loadPolicyFile, PolicyRuleEvaluator, type Policy } from './policy.js';

export type { AuditLogFormat, AuditLogMode, AuditLogOptions } from './backend.js';
export type { AuditRuntime } from './context.js';
export { parsePolicy, loadPolicyFile, PolicyRuleEvaluator, type Policy } from './policy.js';

export interface AuditOptions {
  /** --audit-policy-file (or the policy itself). */
  readonly policyFile?: string;
  readonly policy?: Policy;
  /** The log backend (--audit-log-path and the other --audit-log-* flags). */
  readonly log?: AuditLogOptions;
}

/** AuditLogOptions.Validate's messages. */
export function validateAuditLogOptions(o: AuditLogOptions): string[] {
  const errs: string[] = [];
  const mode = o.mode ?? 'blocking';
  if (!AUDIT_LOG_MODES.includes(mode)) errs.push(`invalid audit log mode ${mode}, allowed modes are ${JSON.stringify(AUDIT_LOG_MODES.join(','))}`);
  const format = o.format ?? 'json';
  if (!AUDIT_LOG_FORMATS.includes(format)) errs.push(`invalid audit log format ${format}, allowed formats are ${JSON.stringify(AUDIT_LOG_FORMATS.join(','))}`);
  if ((o.maxAgeDays ?? 0) < 0) errs.push(`--audit-log-maxage ${o.maxAgeDays} can't be a negative number`);
  if ((o.maxBackups ?? 0) < 0) errs.push(`--audit-log-maxbackup ${o.maxBackups} can't be a negative number`);
  if ((o.maxSizeMB ?? 0) < 0) errs.push(`--audit-log-maxsize ${o.maxSizeMB} can't be a negative number`);
  if (mode === 'batch' && o.batchBufferSize !== undefined && o.batchBufferSize <= 0)
    errs.push(`invalid audit batch log buffer size ${o.batchBufferSize}, must be a positive number`);
  return errs;
}

/**
 * The audit filters' runtime, or undefined when auditing is off. Throws, before anything is
 * served, for a policy file that does not load (`loading audit policy file: ...: from file <path>`),
 * bad log options, or a log file that cannot be created.
 */
export function createAuditRuntime(
  o: AuditOptions | undefined,
  registry: Registry | undefined,
  log: (msg: string) => void,
): { runtime: AuditRuntime; shutdown: () => Promise<void> } | undefined {
  if (!o) return undefined;
  if (o.log) {
    const errs = validateAuditLogOptions(o.log);
    if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  }
  let policy = o.policy;
  if (!policy && o.policyFile) {
    try {
      policy = loadPolicyFile(o.policyFile, log);
    } catch (e) {
      throw new Error(`loading audit policy file: ${(e as Error).message}`, { cause: e });
    }
  }
  if (!policy) {
    if (o.log?.path) log('No audit policy file provided, no events will be recorded for log backend');
    return undefined;
  }
  if (!o.log?.path) return undefined;
  if (o.log.path !== '-') ensureLogFile(o.log.path);
  const metrics = new AuditMetrics(registry);
  const backend = createLogBackend(o.log, metrics, log);
  return { runtime: { evaluator: new PolicyRuleEvaluator(policy), backend, metrics }, shutdown: () => backend.shutdown() };
}

/** ensureLogFile: the directory (0700) and the file (0600) exist and can be written, or the server does not start. */
function ensureLogFile(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a+', 0o600));
  } catch (e) {
    throw new Error(`ensureLogFile: ${(e as Error).message}`, { cause: e });
  }
}
