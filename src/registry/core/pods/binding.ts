// pods/binding (pkg/registry/core/pod/storage BindingREST): how a scheduler places a pod. A POST of
// a core/v1 Binding whose target names a Node sets spec.nodeName and adds the PodScheduled=True
// condition; a pod already placed (or being deleted) is a 409 on pods/binding, as upstream's
// assignPod answers. A plain update may not set spec.nodeName (ValidatePodUpdate); only this write
// may, so the write is marked for the strategy's validation.
import { badRequest, conflict, fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import { rfc3339 } from '../../../apimachinery/times.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1123Subdomain } from '../../../apimachinery/validation/names.js';
import { CORE, apiVersionField, kind, kindField, objectMetaField, ref } from '../../../apimachinery/definitions/util.js';
import type { Definitions } from '../../../apimachinery/schema.js';
import { cloneObject } from '../../codec.js';
import type { SubresourceStrategy } from '../../strategy.js';

type Pod = KubeObject & { spec?: { nodeName?: string }; status?: { conditions?: { type?: string; status?: string; lastTransitionTime?: string }[] } };
type Binding = KubeObject & { target?: { kind?: string; name?: string; apiVersion?: string } };

const BINDING = { group: '', resource: 'pods/binding' };

/** Pods written through pods/binding: their spec.nodeName may change from empty. */
export const boundByBinding = new WeakSet<KubeObject>();

export const bindingDefinitions: Definitions = {
  [CORE + 'Binding']: kind(
    { group: '', kind: 'Binding', version: 'v1' },
    'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      target: ref(CORE + 'ObjectReference', 'The target object that you want to bind to the standard object.'),
    },
    { required: ['target'] },
  ),
};

/** ValidatePodBinding. */
function validateBinding(b: Binding): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const t = b.target ?? {};
  if (t.kind && t.kind !== 'Node') issues.push(fieldIssue.notSupported('target.kind', t.kind, ['Node', '<empty>']));
  if (!t.name) issues.push(fieldIssue.required('target.name', ''));
  else for (const m of isDNS1123Subdomain(t.name)) issues.push(fieldIssue.invalid('target.name', t.name, m));
  return issues;
}

export const bindingSubresource: SubresourceStrategy = {
  merge: (incoming) => incoming,
  // The object written is the stored pod with nodeName and the condition set (fold, below).
  prepareForUpdate(o) {
    boundByBinding.add(o);
  },
  report: {
    validate: (body) => validateBinding(body),
    fold(body, current) {
      const b = body as Binding;
      const p = current as Pod;
      const name = p.metadata?.name ?? '';
      // BindingREST.Create and assignPod: plain errors, answered as a Conflict on pods/binding.
      if (b.metadata?.name && b.metadata.name !== name) throw badRequest('name in URL does not match name in Binding object');
      if (p.metadata?.deletionTimestamp) throw conflict(BINDING, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      if (p.spec?.nodeName) throw conflict(BINDING, name, `pod ${name} is already assigned to node "${p.spec.nodeName}"`);
      const next = cloneObject(current) as Pod;
      (next.spec ??= {}).nodeName = b.target!.name!;
      const st = (next.status ??= {});
      const conds = (st.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
      st.conditions = [...conds, { type: 'PodScheduled', status: 'True', lastTransitionTime: rfc3339(Date.now()) }];
      return { object: next, answer: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, created: true, changed: true };
    },
  },
};
