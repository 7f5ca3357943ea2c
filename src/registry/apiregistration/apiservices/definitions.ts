// apiregistration.k8s.io/v1 OpenAPI definitions (descriptions shortened from upstream's).
import type { Definitions } from '../../../apimachinery/schema.js';
import {
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  struct,
} from '../../../apimachinery/definitions/util.js';
import { APIREGISTRATION_GROUP, APIREGISTRATION_VERSION } from './types.js';

export const APIREGISTRATION_DEF = 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.';
const GV = { group: APIREGISTRATION_GROUP, version: APIREGISTRATION_VERSION };

export const apiServiceDefinitions: Definitions = {
  [APIREGISTRATION_DEF + 'APIService']: kind(
    { ...GV, kind: 'APIService' },
    'APIService represents a server for a particular GroupVersion. Name must be "version.group".',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(APIREGISTRATION_DEF + 'APIServiceSpec', 'Spec contains information for locating and communicating with a server'),
      status: ref(APIREGISTRATION_DEF + 'APIServiceStatus', 'Status contains derived information about an API server'),
    },
  ),
  [APIREGISTRATION_DEF + 'APIServiceList']: listKind(GV, APIREGISTRATION_DEF + 'APIService', 'APIService', 'Items is the list of APIService'),
  [APIREGISTRATION_DEF + 'APIServiceSpec']: struct(
    'APIServiceSpec contains information for locating and communicating with a server. Only https is supported, though you are able to disable certificate verification.',
    {
      caBundle: {
        type: 'string',
        format: 'byte',
        description:
          "CABundle is a PEM encoded CA bundle which will be used to validate an API server's serving certificate. If unspecified, system trust roots on the apiserver are used.",
        'x-kubernetes-list-type': 'atomic',
      },
      group: str('Group is the API group name this server hosts'),
      groupPriorityMinimum: int32(
        "GroupPriorityMinimum is the priority this group should have at least. Higher priority means that the group is preferred by clients over lower priority ones. Note that other versions of this group might specify even higher GroupPriorityMinimum values such that the whole group gets a higher priority. The primary sort is based on GroupPriorityMinimum, ordered highest number to lowest (20 before 10). The secondary sort is based on the alphabetical comparison of the name of the object (v1.bar before v1.foo). We'd recommend something like: *.k8s.io (except extensions) at 18000 and PaaSes (OpenShift, Deis) are recommended to be in the 2000s",
      ),
      insecureSkipTLSVerify: bool(
        'InsecureSkipTLSVerify disables TLS certificate verification when communicating with this server. This is strongly discouraged.  You should use the CABundle instead.',
      ),
      service: ref(
        APIREGISTRATION_DEF + 'ServiceReference',
        'Service is a reference to the service for this API server.  It must communicate on port 443. If the Service is nil, that means the handling for the API groupversion is handled locally on this server. The call will simply delegate to the normal handler chain to be fulfilled.',
      ),
      version: str('Version is the API version this server hosts.  For example, "v1"'),
      versionPriority: int32(
        "VersionPriority controls the ordering of this API version inside of its group.  Must be greater than zero. The primary sort is based on VersionPriority, ordered highest to lowest (20 before 10). Since it's inside of a group, the number can be small, probably in the 10s. In case of equal version priorities, the version string will be used to compute the order inside a group.",
      ),
    },
    { required: ['groupPriorityMinimum', 'versionPriority'] },
  ),
  [APIREGISTRATION_DEF + 'APIServiceStatus']: struct('APIServiceStatus contains derived information about an API server', {
    conditions: arrayOf(ref(APIREGISTRATION_DEF + 'APIServiceCondition', ''), 'Current service state of apiService.', {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    }),
  }),
  [APIREGISTRATION_DEF + 'APIServiceCondition']: struct(
    'APIServiceCondition describes the state of an APIService at a particular point',
    {
      lastTransitionTime: ref(META + 'Time', 'Last time the condition transitioned from one status to another.'),
      message: str('Human-readable message indicating details about last transition.'),
      reason: str("Unique, one-word, CamelCase reason for the condition's last transition."),
      status: str('Status is the status of the condition. Can be True, False, Unknown.'),
      type: str('Type is the type of the condition.'),
    },
    { required: ['type', 'status'] },
  ),
  [APIREGISTRATION_DEF + 'ServiceReference']: struct('ServiceReference holds a reference to Service.legacy.k8s.io', {
    name: str('Name is the name of the service'),
    namespace: str('Namespace is the namespace of the service'),
    port: int32(
      'If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. `port` should be a valid port number (1-65535, inclusive).',
    ),
  }),
};
