// The route controller (k8s.io/cloud-provider controllers/route): every
// --route-reconciliation-period (10 s) it compares the cloud's routes with each Node's
// spec.podCIDRs, creates the missing ones (name hint: the Node's UID; event FailedToCreateRoute
// on failure), deletes blackhole routes and routes inside --cluster-cidr that no node owns, and sets
// each Node's NetworkUnavailable condition: False/RouteCreated once all its routes exist,
// True/NoRouteCreated otherwise. Runs only with --allocate-node-cidrs, --configure-cloud-routes
// and a provider that has Routes.
import { isIP } from 'node:net';
import { asLogger, type Logger } from '../../golang/klog.js';
import { realClock, sleep, type Clock } from '../runtime/clock.js';
import { controllerFactory, type ControllerContext, type ControllerFactory } from '../types.js';
import { EventRecorder } from './events.js';
import type { CloudProvider, Ctx, Node, NodeAddress, Route, Routes } from './provider.js';
import { NODES } from './service.js';

interface Cidr {
  readonly family: 4 | 6;
  readonly first: bigint;
  readonly last: bigint;
}

function ipToBigInt(ip: string): { family: 4 | 6; value: bigint } | undefined {
  const fam = isIP(ip);
  if (fam === 4) return { family: 4, value: ip.split('.').reduce((a, o) => (a << 8n) | BigInt(Number(o)), 0n) };
  if (fam !== 6) return undefined;
  const [head = '', tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // An IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const expand = (gs: string[]): string[] =>
    gs.flatMap((g) => (g.includes('.') ? ((n) => [((n >> 16) & 0xffff).toString(16), (n & 0xffff).toString(16)])(Number(ipToBigInt(g)!.value)) : [g]));
  const hh = expand(h);
  const tt = expand(t);
  const groups = tail === undefined ? hh : [...hh, ...Array<string>(8 - hh.length - tt.length).fill('0'), ...tt];
  return { family: 6, value: groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g || '0', 16)), 0n) };
}

/** Parses `a.b.c.d/n` or `x::/n` (Go's ParseCIDRSloppy: leading zeros in IPv4 allowed); undefined if invalid. */
export function parseCIDR(text: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const ip = ipToBigInt(m[1]!.replace(/(^|\.)0+(\d)/g, '$1$2'));
  const bits = Number(m[2]);
  if (!ip) return undefined;
  const size = ip.family === 4 ? 32 : 128;
  if (bits > size) return undefined;
  const hostBits = BigInt(size - bits);
  const first = (ip.value >> hostBits) << hostBits;
  return { family: ip.family, first, last: first | ((1n << hostBits) - 1n) };
}

const contains = (c: Cidr, family: number, v: bigint): boolean => c.family === family && v >= c.first && v <= c.last;

const equalNodeAddrs = (a: readonly NodeAddress[] = [], b: readonly NodeAddress[] = []): boolean =>
  a.length === b.length && a.every((x) => b.some((y) => y.type === x.type && y.address === x.address));

type Action = 'keep' | 'add' | 'remove' | 'update';

function routeAction(routes: readonly Route[], cidr: string, addrs: readonly NodeAddress[] | undefined): Action {
  const r = routes.find((x) => x.destinationCIDR === cidr);
  if (!r) return 'add';
  return !r.enableNodeAddresses || equalNodeAddrs(addrs, r.targetNodeAddresses) ? 'keep' : 'update';
}

export interface RouteControllerOptions {
  readonly provider: CloudProvider;
  /** --cluster-cidr: one CIDR, or two (one per IP family) comma-separated. */
  readonly clusterCIDR: string;
  readonly clusterName?: string;
  /** --route-reconciliation-period (default 10 s). */
  readonly reconciliationPeriodMs?: number;
  readonly clock?: Clock;
}

export const NODE_ROUTE_CONTROLLER = 'node-route-controller';

/** Checks --cluster-cidr as upstream's processCIDRs does; returns the parsed CIDRs. */
export function parseClusterCIDRs(text: string): Cidr[] {
  const parts = text.split(',').map((s) => s.trim());
  const cidrs = parts.map((p) => {
    const c = parseCIDR(p);
    if (!c) throw new Error(`invalid CIDR address: ${p}`);
    return c;
  });
  if (cidrs.length > 2) throw new Error(`length of clusterCIDRs is:${cidrs.length} more than max allowed of 2`);
  if (cidrs.length === 2 && cidrs[0]!.family === cidrs[1]!.family) {
    throw new Error(`len of ClusterCIDRs==${cidrs.length} and they are not configured as dual stack (at least one from each IPFamily`);
  }
  return cidrs;
}

export function routeController(opts: RouteControllerOptions): ControllerFactory {
  const clusterCIDRs = parseClusterCIDRs(opts.clusterCIDR);
  return controllerFactory(NODE_ROUTE_CONTROLLER, (ctx) => {
    const routes = opts.provider.routes();
    if (!routes) {
      asLogger(ctx.log).info('--configure-cloud-routes is set, but cloud provider does not support routes. Will not configure cloud provider routes.');
      return { start: () => Promise.resolve() };
    }
    return new RouteController(ctx, routes, clusterCIDRs, opts);
  });
}

export class RouteController {
  readonly needLeaderElection = true;
  private readonly nodes;
  private readonly events: EventRecorder;
  private readonly log: Logger;
  private readonly clusterName: string;
  private readonly period: number;
  private readonly clock: Clock;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly routes: Routes,
    private readonly clusterCIDRs: readonly Cidr[],
    opts: RouteControllerOptions,
  ) {
    this.log = asLogger(ctx.log);
    this.clusterName = opts.clusterName ?? 'kubernetes';
    this.period = opts.reconciliationPeriodMs ?? 10_000;
    this.clock = opts.clock ?? realClock;
    this.nodes = ctx.manager.informer<Node>(NODES);
    this.events = new EventRecorder({ client: ctx.client, component: 'route_controller', log: ctx.log });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.log.info('Starting route controller');
    try {
      while (!signal.aborted) {
        try {
          await this.reconcileNodeRoutes({ signal });
        } catch (e) {
          this.log.error(e, "Couldn't reconcile node routes");
        }
        if (!(await sleep(this.clock, this.period, signal))) break;
      }
    } finally {
      await this.events.flush();
      this.log.info('Shutting down route controller');
    }
  }

  private responsibleFor(route: Route): boolean {
    const c = parseCIDR(route.destinationCIDR);
    if (!c) {
      this.log.error(undefined, 'Ignoring route, unparsable CIDR', 'route', route.name, 'cidr', route.destinationCIDR);
      return false;
    }
    return this.clusterCIDRs.some((cc) => contains(cc, c.family, c.first) || contains(cc, c.family, c.last));
  }

  async reconcileNodeRoutes(ctx: Ctx): Promise<void> {
    let routeList: Route[];
    try {
      routeList = await this.routes.listRoutes(ctx, this.clusterName);
    } catch (e) {
      throw new Error(`error listing routes: ${(e as Error).message}`, { cause: e });
    }
    const nodes = this.nodes.store.list();
    const byNode = new Map<string, Route[]>();
    for (const r of routeList) if (r.targetNode) byNode.set(r.targetNode, [...(byNode.get(r.targetNode) ?? []), r]);
    const actions = new Map<string, Map<string, Action>>();
    for (const n of nodes) {
      const cidrs = n.spec?.podCIDRs ?? [];
      const name = n.metadata?.name ?? '';
      // A node with routes but no podCIDRs has nothing to keep: NoRouteCreated.
      if (!cidrs.length) {
        if (byNode.has(name)) actions.set(name, new Map());
        continue;
      }
      const m = new Map<string, Action>();
      for (const cidr of cidrs) m.set(cidr, routeAction(byNode.get(name) ?? [], cidr, n.status?.addresses));
      actions.set(name, m);
    }
    for (const r of routeList) {
      if (!this.responsibleFor(r)) continue;
      const a = actions.get(r.targetNode)?.get(r.destinationCIDR);
      if (r.blackhole || a === undefined || a === 'remove' || a === 'update') {
        try {
          await this.routes.deleteRoute(ctx, this.clusterName, r);
          this.log.info('Deleted route', 'route', r.name, 'cidr', r.destinationCIDR);
        } catch (e) {
          this.log.error(e, 'Could not delete route', 'route', r.name, 'cidr', r.destinationCIDR);
        }
      }
    }
    for (const n of nodes) {
      const name = n.metadata?.name ?? '';
      const m = actions.get(name);
      if (!m) continue;
      for (const [cidr, a] of m) {
        if (a === 'keep' || a === 'remove') continue;
        const route: Route = { name: '', targetNode: name, targetNodeAddresses: n.status?.addresses ?? [], destinationCIDR: cidr };
        const hint = n.metadata?.uid ?? '';
        try {
          await this.routes.createRoute(ctx, this.clusterName, hint, route);
          m.set(cidr, 'keep');
          this.log.info('Created route for node', 'node', name, 'cidr', cidr, 'hint', hint);
        } catch (e) {
          const msg = `Could not create route ${hint} ${cidr} for node ${name}: ${(e as Error).message}`;
          this.events.event(n, 'Node', 'Warning', 'FailedToCreateRoute', msg);
          this.log.error(e, 'Could not create route', 'node', name, 'cidr', cidr);
        }
      }
    }
    for (const n of nodes) {
      const m = actions.get(n.metadata?.name ?? '');
      if (!m) continue;
      const all = m.size > 0 && [...m.values()].every((a) => a !== 'add' && a !== 'update');
      await this.updateNetworkingCondition(n, all);
    }
  }

  private async updateNetworkingCondition(node: Readonly<Node>, routesCreated: boolean): Promise<void> {
    const c = node.status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
    if (routesCreated && c?.status === 'False' && c.reason === 'RouteCreated') return;
    if (!routesCreated && c?.status === 'True' && c.reason === 'NoRouteCreated') return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = routesCreated
      ? { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' }
      : { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route' };
    try {
      // nodeutil.SetNodeCondition: a strategic-merge patch of one condition (merge key `type`).
      await this.ctx.client.patch(
        NODES,
        undefined,
        node.metadata?.name ?? '',
        'strategic',
        { status: { conditions: [{ ...condition, lastHeartbeatTime: now, lastTransitionTime: now }] } },
        { subresource: 'status' },
      );
    } catch (e) {
      this.log.error(e, 'Error updating node', 'node', node.metadata?.name);
    }
  }
}
