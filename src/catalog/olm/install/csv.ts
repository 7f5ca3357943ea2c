// The ClusterServiceVersion state machine (OLM's olm operator, syncClusterServiceVersion), one
// transition per sync: "" → Pending (RequirementsUnknown) → InstallReady (AllRequirementsMet, or
// Pending with RequirementsNotMet) → Installing (InstallSucceeded, "waiting for install components
// to report healthy") → Succeeded. Requirements are OLM's: owned and required CRDs present and
// Established, the ServiceAccounts of spec.install.spec.permissions present; status.requirementStatus
// lists them. The OperatorGroup comes first (none: Failed/NoOperatorGroup; several:
// Failed/TooManyOperatorGroups) and its olm.operatorGroup / olm.operatorNamespace /
// olm.targetNamespaces annotations go on the CSV; then the CSV's installModes are checked against
// the group's target namespaces (Failed with UnsupportedOperatorGroup, InvalidInstallModes or
// NoTargetNamespaces and OLM's messages; back to Pending once they fit). A CSV another one `replaces` goes Replacing
// (BeingReplaced), and once the new one Succeeded, Deleting (Replaced) and is deleted.
//
// kplane has no container runtime: the install strategy's Deployments are not run. Once the
// requirements are met the CSV still reaches Succeeded — what the control plane does for an
// operator is done — and its message names the deployments that wait for a container runtime
// (see docs/enhancements/0010-catalog-install, "Install flow").
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { KubeClient } from '../../../client/types.js';
import { installModeProblem } from './operatorgroup.js';
import { arr, CRDS, CSVS, now, obj, specOf, statusOf, str, type Json } from './shared.js';

export const CSV_REASONS = {
  RequirementsUnknown: 'requirements not yet checked',
  RequirementsNotMet: "one or more requirements couldn't be found",
  AllRequirementsMet: 'all requirements found, attempting install',
  InstallSucceededWaiting: 'waiting for install components to report healthy',
  InstallSucceeded: 'install strategy completed with no errors',
  NoOperatorGroup: 'csv in namespace with no operatorgroups',
  TooManyOperatorGroups: "csv created in namespace with multiple operatorgroups, can't pick one automatically",
  Replaced: 'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
  NoTargetNamespaces: 'no targetNamespaces are matched operatorgroups namespace selection',
  InstallModesNowSupported: 'InstallModes now support target namespaces',
} as const;

/** Failures that go away with the OperatorGroup problem behind them (OLM starts such a CSV over). */
const GROUP_FAILURES = new Set(['NoOperatorGroup', 'TooManyOperatorGroups', 'NoTargetNamespaces', 'UnsupportedOperatorGroup']);

export interface RequirementStatus {
  group: string;
  version: string;
  kind: string;
  name: string;
  status: 'Present' | 'NotPresent' | 'PresentNotSatisfied';
  message: string;
  uuid?: string;
}

/** The deployments of the CSV's install strategy. */
export function deploymentNames(csv: KubeObject): string[] {
  const spec = obj(obj(specOf(csv).install).spec);
  return arr(spec.deployments)
    .map((d) => str(obj(d).name))
    .filter(Boolean);
}

export class CsvSync {
  constructor(private readonly client: KubeClient) {}

  /**
   * One sync of every CSV of a namespace (the OperatorGroups and all CSVs read once; copied CSVs
   * left out by the caller). `targets` is the single OperatorGroup's status.namespaces.
   */
  async syncNamespace(ns: string, csvs: readonly KubeObject[], operatorGroups: readonly KubeObject[], targets: readonly string[] = []): Promise<void> {
    for (const csv of csvs) {
      if (csv.metadata?.deletionTimestamp) continue;
      try {
        await this.sync(ns, csv, csvs, operatorGroups, targets);
      } catch (e) {
        if (e instanceof StatusError && (e.code === 404 || e.code === 409)) continue;
        throw e;
      }
    }
  }

  private async sync(ns: string, csv: KubeObject, all: readonly KubeObject[], ogs: readonly KubeObject[], targetList: readonly string[]): Promise<void> {
    const name = csv.metadata?.name ?? '';
    const status = statusOf(csv);
    const phase = str(status.phase);
    const reason = str(status.reason);
    // The OperatorGroup.
    if (ogs.length !== 1) {
      const why = ogs.length === 0 ? 'NoOperatorGroup' : 'TooManyOperatorGroups';
      if (phase !== 'Failed' || reason !== why) await this.transition(ns, csv, 'Failed', why, CSV_REASONS[why]);
      return;
    }
    const og = ogs[0]!;
    const targets = targetList.join(',');
    const want = { 'olm.operatorGroup': og.metadata?.name ?? '', 'olm.operatorNamespace': ns, 'olm.targetNamespaces': targets };
    const have = csv.metadata?.annotations ?? {};
    if (Object.entries(want).some(([k, v]) => have[k] !== v)) {
      await this.client.patch(CSVS, ns, name, 'merge', { metadata: { annotations: want } }, { fieldManager: 'olm-operator' });
      return; // the write brings the CSV back
    }
    // The install modes against the group's namespaces (OLM checks them before any phase).
    const problem = targetList.length ? installModeProblem(csv, ns, targetList) : { reason: 'NoTargetNamespaces', message: CSV_REASONS.NoTargetNamespaces };
    if (problem) {
      if (phase !== 'Failed' || reason !== problem.reason || str(status.message) !== problem.message)
        await this.transition(ns, csv, 'Failed', problem.reason, problem.message);
      return;
    }
    // Replacement.
    const replacer = all.find((o) => str(specOf(o).replaces) === name && !o.metadata?.deletionTimestamp);
    if (replacer) {
      if (str(statusOf(replacer).phase) === 'Succeeded') {
        if (phase !== 'Deleting') await this.transition(ns, csv, 'Deleting', 'Replaced', CSV_REASONS.Replaced);
        await this.client.delete(CSVS, ns, name);
        return;
      }
      if (phase !== 'Replacing') await this.transition(ns, csv, 'Replacing', 'BeingReplaced', `being replaced by csv: ${replacer.metadata?.name ?? ''}`);
      return;
    }
    if (phase === 'Replacing' || phase === 'Deleting') return;
    switch (phase) {
      case '':
      case 'None':
        await this.transition(ns, csv, 'Pending', 'RequirementsUnknown', CSV_REASONS.RequirementsUnknown);
        return;
      case 'Failed':
        // An OperatorGroup problem that went away: start over.
        if (GROUP_FAILURES.has(reason)) await this.transition(ns, csv, 'Pending', 'RequirementsUnknown', CSV_REASONS.InstallModesNowSupported);
        return;
      case 'Pending': {
        const reqs = await this.requirements(ns, csv);
        const met = reqs.every((r) => r.status === 'Present');
        if (met) await this.transition(ns, csv, 'InstallReady', 'AllRequirementsMet', CSV_REASONS.AllRequirementsMet, reqs);
        else if (reason !== 'RequirementsNotMet' || JSON.stringify(reqs) !== JSON.stringify(status.requirementStatus))
          await this.transition(ns, csv, 'Pending', 'RequirementsNotMet', CSV_REASONS.RequirementsNotMet, reqs);
        return;
      }
      case 'InstallReady':
        await this.transition(ns, csv, 'Installing', 'InstallSucceeded', CSV_REASONS.InstallSucceededWaiting);
        return;
      case 'Installing':
      case 'Succeeded': {
        const reqs = await this.requirements(ns, csv);
        if (!reqs.every((r) => r.status === 'Present')) {
          await this.transition(ns, csv, 'Pending', 'RequirementsNotMet', CSV_REASONS.RequirementsNotMet, reqs);
          return;
        }
        const deployments = deploymentNames(csv);
        const message = deployments.length
          ? `${CSV_REASONS.InstallSucceeded}; waiting for a container runtime: kplane runs no containers, deployment ${deployments.join(', ')} not running`
          : CSV_REASONS.InstallSucceeded;
        if (phase !== 'Succeeded' || str(status.message) !== message) await this.transition(ns, csv, 'Succeeded', 'InstallSucceeded', message, reqs);
        return;
      }
      default:
        return;
    }
  }

  /** status.requirementStatus as OLM writes it: the CRDs, then the ServiceAccounts. */
  async requirements(ns: string, csv: KubeObject): Promise<RequirementStatus[]> {
    const spec = specOf(csv);
    const crds = obj(spec.customresourcedefinitions);
    const out: RequirementStatus[] = [];
    const seen = new Set<string>();
    for (const d of [...arr(crds.owned), ...arr(crds.required)]) {
      const crdName = str(obj(d).name);
      if (!crdName || seen.has(crdName)) continue;
      seen.add(crdName);
      const req: RequirementStatus = {
        group: 'apiextensions.k8s.io',
        version: 'v1',
        kind: 'CustomResourceDefinition',
        name: crdName,
        status: 'NotPresent',
        message: 'CRD is not present',
      };
      const crd = await this.client.get(CRDS, undefined, crdName).catch((e: unknown) => {
        if (e instanceof StatusError && e.code === 404) return undefined;
        throw e;
      });
      if (crd) {
        req.uuid = crd.metadata?.uid ?? '';
        const established = arr(obj((crd as Json).status).conditions).some((c) => obj(c).type === 'Established' && obj(c).status === 'True');
        req.status = established ? 'Present' : 'NotPresent';
        req.message = established
          ? 'CRD is present and Established condition is true'
          : 'CRD is present but the Established condition is False (not available)';
      }
      out.push(req);
    }
    const install = obj(obj(spec.install).spec);
    const sas = new Set<string>();
    for (const p of [...arr(install.permissions), ...arr(install.clusterPermissions)]) {
      const sa = str(obj(p).serviceAccountName);
      if (!sa || sas.has(sa)) continue;
      sas.add(sa);
      const got = await this.client.get({ group: '', version: 'v1', resource: 'serviceaccounts' }, ns, sa).catch((e: unknown) => {
        if (e instanceof StatusError && e.code === 404) return undefined;
        throw e;
      });
      out.push({
        group: '',
        version: 'v1',
        kind: 'ServiceAccount',
        name: sa,
        status: got ? 'Present' : 'NotPresent',
        message: got ? '' : 'Service account does not exist',
        ...(got?.metadata?.uid ? { uuid: got.metadata.uid } : {}),
      });
    }
    return out;
  }

  private async transition(ns: string, csv: KubeObject, phase: string, reason: string, message: string, reqs?: RequirementStatus[]): Promise<void> {
    const status = statusOf(csv);
    const t = now();
    const conditions = [...arr(status.conditions), { phase, reason, message, lastUpdateTime: t, lastTransitionTime: t }].slice(-20);
    const next: Json = { phase, reason, message, lastUpdateTime: t, lastTransitionTime: t, conditions, ...(reqs ? { requirementStatus: reqs } : {}) };
    await this.client.patch(CSVS, ns, csv.metadata?.name ?? '', 'merge', { status: next }, { subresource: 'status', fieldManager: 'olm-operator' });
  }
}
