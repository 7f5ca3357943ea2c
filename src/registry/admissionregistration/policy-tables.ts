// printers.go's columns of the admission policies and their bindings, validating and mutating alike:
// a policy shows its name, how many rules it has (Validations, Mutations), its ParamKind and age;
// a binding its name, policy, ParamRef and age.
import type { KubeObject } from '../../apimachinery/types.js';
import { labelSelectorToString, tryLabelSelectorFromObject } from '../../apimachinery/labels.js';
import type { ParamRef } from '../../admission/policy/types.js';
import type { Strategy, TableColumn } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';

type Table = Pick<Strategy, 'tableColumns' | 'tableCells'>;
interface PolicyLike {
  spec?: { paramKind?: { apiVersion?: string; kind?: string } } & Record<string, unknown>;
}
interface BindingLike {
  spec?: { policyName?: string; paramRef?: ParamRef };
}

/** A policy's columns; `rules` is the spec field counted (`validations`, `mutations`) under `column`. */
export function policyTable(rules: string, column: string, description: string): Table {
  return {
    tableColumns: [nameColumn, { name: column, type: 'integer', description, priority: 0 }, PARAM_KIND_COLUMN, ageColumn],
    tableCells: (o: KubeObject) => {
      const spec = (o as PolicyLike).spec;
      const list = spec?.[rules];
      const pk = spec?.paramKind;
      return [
        o.metadata?.name ?? '',
        Array.isArray(list) ? list.length : 0,
        pk ? `${pk.apiVersion ?? ''}/${pk.kind ?? ''}` : '<unset>',
        ageSince(o.metadata?.creationTimestamp),
      ];
    },
  };
}

const PARAM_KIND_COLUMN: TableColumn = {
  name: 'ParamKind',
  type: 'string',
  description: 'ParamKind specifies the kind of resources used to parameterize this policy',
  priority: 0,
};

/** printers.go: a binding's PARAMREF cell. */
function paramRefCell(o: BindingLike): string {
  const pr = o.spec?.paramRef;
  if (!pr) return '<unset>';
  if (pr.name) return pr.namespace ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
  if (pr.selector) {
    const r = tryLabelSelectorFromObject(pr.selector);
    return r.ok ? labelSelectorToString(r.selector) : '<error>';
  }
  return '<unset>';
}

/** A policy binding's columns. */
export const bindingTable: Table = {
  tableColumns: [
    nameColumn,
    { name: 'PolicyName', type: 'string', description: 'PolicyName indicates the policy definition which the policy binding binded to', priority: 0 },
    { name: 'ParamRef', type: 'string', description: 'ParamRef indicates the param resource which sets the configration param', priority: 0 },
    ageColumn,
  ],
  tableCells: (o: KubeObject) => {
    const b = o as BindingLike;
    return [o.metadata?.name ?? '', b.spec?.policyName ?? '', paramRefCell(b), ageSince(o.metadata?.creationTimestamp)];
  },
};
