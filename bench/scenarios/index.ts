// Every scenario of bench/run.ts, in the order a run takes them: first those on the shared kplane
// and bare servers, then those that start servers of their own.
import type { Scenario } from '../context.js';
import { backup } from './backup.js';
import { audit } from './audit.js';
import { catalog } from './catalog.js';
import { ccmSuite } from './ccmsuite.js';
import { cloudScale } from './cloud.js';
import { controllers } from './controllers.js';
import { cr } from './cr.js';
import { dataplane } from './dataplane.js';
import { crud } from './crud.js';
import { etcd } from './etcd.js';
import { etcdHa } from './etcd-ha.js';
import { extending } from './extending.js';
import { features } from './features.js';
import { list10k } from './list10k.js';
import { liststream } from './liststream.js';
import { micro } from './micro.js';
import { olmInstall } from './olm-install.js';
import { olmResolve } from './olm-resolve.js';
import { openloop } from './openloop.js';
import { rbac } from './rbac.js';
import { rbacload } from './rbacload.js';
import { rss } from './rss.js';
import { sqlite } from './sqlite.js';
import { sqlitePages } from './sqlite-pages.js';
import { ssa } from './ssa.js';
import { watch } from './watch.js';

export const SCENARIOS: readonly Scenario[] = [
  crud,
  openloop,
  list10k,
  watch,
  ssa,
  cr,
  sqlite,
  sqlitePages,
  rss,
  liststream,
  backup,
  etcd,
  etcdHa,
  controllers,
  audit,
  rbac,
  rbacload,
  catalog,
  dataplane,
  cloudScale,
  ccmSuite,
  extending,
  olmResolve,
  olmInstall,
  features,
  micro,
];

/** The `--only` names, in the order `--help` lists them. */
export const SCENARIO_NAMES = [
  'create',
  'get',
  'update',
  'list',
  'openloop',
  'sqlite',
  'sqlitepages',
  'list10k',
  'liststream',
  'backup',
  'watch',
  'rss',
  'etcd',
  'etcdha',
  'ssa',
  'cr',
  'nsdelete',
  'gc',
  'idlecm',
  'audit',
  'catalog',
  'resolver',
  'olm-install',
  'micro',
  'rbac',
  'rbacload',
  'dataplane',
  'lb1000',
  'nodesim',
  'ccmsuite',
  'webhook',
  'policy',
  'mutating-policy',
  'aggregated',
  'clearfield',
  'featureconverge',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
