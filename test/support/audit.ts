// Reads an audit log file (`--audit-log-path`, one JSON event a line) as the e2e tests check it.
import { readFileSync } from 'node:fs';

/** The events of the log at `path`, in order; only those of `stage` when given (e.g. `ResponseComplete`). */
export function readAuditEvents<T extends { stage: string }>(path: string, stage?: string): T[] {
  const all = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
  return stage === undefined ? all : all.filter((e) => e.stage === stage);
}
