// List/watch filtering: a label selector and a field selector compiled against one resource.
import type { GroupResource, KubeObject } from '../apimachinery/types.js';
import { checkSupportedFields, matchesFields, parseFieldSelector, isEmptyFieldSelector, unknownDefaultFieldSelectorMessage } from '../apimachinery/fields.js';
import { isEmptySelector, matchesLabels, parseLabelSelector } from '../apimachinery/labels.js';
import type { Strategy } from './strategy.js';

export interface Predicate {
  /** No selector at all: every object matches (lets callers skip work). */
  readonly empty: boolean;
  matches(obj: KubeObject): boolean;
}

export const everything: Predicate = { empty: true, matches: () => true };

export function compilePredicate(labelSelector: string | undefined, fieldSelector: string | undefined, strategy: Strategy, _gr: GroupResource): Predicate {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : undefined;
  const fields = fieldSelector ? parseFieldSelector(fieldSelector) : undefined;
  const hasLabels = !!labels && !isEmptySelector(labels);
  const hasFields = !!fields && !isEmptyFieldSelector(fields);
  if (!hasLabels && !hasFields) return everything;
  if (fields && hasFields) {
    if (strategy.selectableFields) {
      // A kind with field labels of its own registers a conversion function upstream (Secret, Event,
      // Namespace, custom resources with selectableFields): its labels, metadata.name, and
      // metadata.namespace when namespaced; anything else is "field label not supported".
      const own = Object.keys(strategy.selectableFields({}));
      checkSupportedFields(fields, new Set(['metadata.name', ...(strategy.namespaced ? ['metadata.namespace'] : []), ...own]));
    } else {
      // Others go through runtime.DefaultMetaV1FieldSelectorConversion.
      checkSupportedFields(fields, new Set(['metadata.name', 'metadata.namespace']), unknownDefaultFieldSelectorMessage);
    }
  }
  return {
    empty: false,
    matches(obj) {
      if (hasLabels && !matchesLabels(labels, obj.metadata?.labels)) return false;
      if (hasFields) {
        const f: Record<string, string> = {
          'metadata.name': obj.metadata?.name ?? '',
          'metadata.namespace': obj.metadata?.namespace ?? '',
          ...(strategy.selectableFields?.(obj) ?? {}),
        };
        if (!matchesFields(fields, f)) return false;
      }
      return true;
    },
  };
}
