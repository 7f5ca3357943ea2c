// io.k8s.api.discovery.v1.EndpointSlice: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
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
  stringList,
  stringMap,
  struct,
} from '../../../apimachinery/definitions/util.js';

const D = 'io.k8s.api.discovery.v1.';
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;

export const endpointSliceDefinitions: Definitions = {
  [D + 'EndpointSlice']: kind(
    { group: 'discovery.k8s.io', kind: 'EndpointSlice', version: 'v1' },
    'EndpointSlice is a subset of the endpoints of a service; the label kubernetes.io/service-name names the service.',
    {
      addressType: str('IPv4, IPv6 or FQDN: the type of every address in the slice. Immutable.'),
      apiVersion: apiVersionField,
      endpoints: arrayOf(refTo(D + 'Endpoint'), 'The endpoints of the slice (at most 1000).', atomic),
      kind: kindField,
      metadata: objectMetaField(),
      ports: arrayOf(refTo(D + 'EndpointPort'), 'The ports every endpoint of the slice exposes (at most 20000).', atomic),
    },
    { required: ['addressType', 'endpoints'] },
  ),
  [D + 'Endpoint']: struct(
    'Endpoint represents a single logical "backend" implementing a service.',
    {
      addresses: stringList("The addresses of the endpoint (1 to 100), of the slice's addressType.", { 'x-kubernetes-list-type': 'set' }),
      conditions: ref(D + 'EndpointConditions', 'The current state of the endpoint (ready, serving, terminating).'),
      deprecatedTopology: stringMap('Deprecated: the topology of the endpoint.'),
      hints: ref(D + 'EndpointHints', 'Topology hints for consumers.'),
      hostname: str('The hostname of the endpoint.'),
      nodeName: str('The node hosting the endpoint.'),
      targetRef: ref(CORE + 'ObjectReference', 'The object providing the endpoint (a Pod).'),
      zone: str('The zone the endpoint is in.'),
    },
    { required: ['addresses'] },
  ),
  [D + 'EndpointConditions']: struct('EndpointConditions represents the current condition of an endpoint.', {
    ready: bool('The endpoint is ready to receive traffic (serving and not terminating, unless the service publishes not-ready addresses).'),
    serving: bool("The endpoint is ready (its pod's Ready condition), whether or not it is terminating."),
    terminating: bool('The endpoint is terminating.'),
  }),
  [D + 'EndpointHints']: struct('EndpointHints provides hints describing how an endpoint should be consumed.', {
    forNodes: arrayOf(refTo(D + 'ForNode'), 'Nodes that should consume this endpoint.', atomic),
    forZones: arrayOf(refTo(D + 'ForZone'), 'Zones that should consume this endpoint.', atomic),
  }),
  [D + 'ForZone']: struct(
    'ForZone provides information about which zones should consume this endpoint.',
    { name: str('The name of the zone.') },
    { required: ['name'] },
  ),
  [D + 'ForNode']: struct(
    'ForNode provides information about which nodes should consume this endpoint.',
    { name: str('The name of the node.') },
    { required: ['name'] },
  ),
  [D + 'EndpointPort']: struct(
    'EndpointPort represents a Port used by an EndpointSlice.',
    {
      appProtocol: str('The application protocol of this port.'),
      name: str('The name of this port, matching a ServicePort name.'),
      port: int32('The port number; unset means all ports.'),
      protocol: str('TCP (default), UDP or SCTP.'),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  ),
  [D + 'EndpointSliceList']: listKind({ group: 'discovery.k8s.io', version: 'v1' }, D + 'EndpointSlice', 'EndpointSlice', 'The endpoint slices.'),
};
