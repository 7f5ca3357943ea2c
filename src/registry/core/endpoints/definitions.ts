// io.k8s.api.core.v1.Endpoints: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import { CORE, apiVersionField, arrayOf, int32, kind, kindField, listKind, objectMetaField, ref, str, struct } from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;

export const endpointsDefinitions: Definitions = {
  [CORE + 'Endpoints']: kind(
    { group: '', kind: 'Endpoints', version: 'v1' },
    'Endpoints is the set of endpoints of a service (deprecated upstream in favour of EndpointSlices, and still read by many tools).',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      subsets: arrayOf(refTo(CORE + 'EndpointSubset'), 'The addresses and ports of the endpoints.', atomic),
    },
  ),
  [CORE + 'EndpointSubset']: struct('EndpointSubset is a group of addresses with a common set of ports.', {
    addresses: arrayOf(refTo(CORE + 'EndpointAddress'), 'Addresses ready to receive traffic.', atomic),
    notReadyAddresses: arrayOf(refTo(CORE + 'EndpointAddress'), 'Addresses not ready (or not yet) to receive traffic.', atomic),
    ports: arrayOf(refTo(CORE + 'EndpointPort'), 'The port numbers available on the addresses.', atomic),
  }),
  [CORE + 'EndpointAddress']: struct(
    'EndpointAddress is a tuple that describes single IP address.',
    {
      hostname: str('The hostname of this endpoint.'),
      ip: str('The IP of this endpoint.'),
      nodeName: str('The node hosting this endpoint.'),
      targetRef: ref(CORE + 'ObjectReference', 'The object providing the endpoint (a Pod).'),
    },
    { required: ['ip'], 'x-kubernetes-map-type': 'atomic' },
  ),
  [CORE + 'EndpointPort']: struct(
    'EndpointPort is a tuple that describes a single port.',
    {
      appProtocol: str('The application protocol of this port.'),
      name: str('The name of this port, matching a ServicePort name.'),
      port: int32('The port number of the endpoint.'),
      protocol: str('TCP (default), UDP or SCTP.'),
    },
    { required: ['port'], 'x-kubernetes-map-type': 'atomic' },
  ),
  [CORE + 'EndpointsList']: listKind(V1, CORE + 'Endpoints', 'Endpoints', 'The endpoints.'),
};
