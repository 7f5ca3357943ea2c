// Every kind kplane ships, for code that works with them outside a control plane: tests, clients
// decoding protobuf, OpenAPI fixtures. A control plane knows only what its modules register.
import { metaDefinitions } from '../apimachinery/definitions/meta.js';
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import type { Definitions } from '../apimachinery/schema.js';
import { leases } from './coordination/leases/index.js';
import { configMaps } from './core/configmaps/index.js';
import { coreEvents } from './core/events/index.js';
import { namespaces } from './core/namespaces/index.js';
import { secrets } from './core/secrets/index.js';
import { serviceAccounts } from './core/serviceaccounts/index.js';
import { eventsV1Events } from './events/events/index.js';
import type { ResourceRegistration } from './registry.js';

/** The built-in kinds (apiextensions' CRDs aside), core first, then groups by name (discovery's order). */
export const builtinKinds: readonly ResourceRegistration[] = [configMaps, coreEvents, namespaces, secrets, serviceAccounts, leases, eventsV1Events];

export const builtinResources: readonly ResourceDescriptor[] = builtinKinds.map((k) => k.descriptor);

/** The meta definitions and those of every built-in kind (apiextensions' aside). */
export const builtinDefinitions: Definitions = Object.assign({}, metaDefinitions, ...builtinKinds.map((k) => k.definitions ?? {})) as Definitions;
