// All built-in definitions in one table, as served in /openapi/v2 (before filtering to what the
// served resources reference) and used by patching and field validation.

import type { Definitions } from '../../apimachinery/schema.js';
import { coordinationDefinitions } from './coordination.js';
import { coreDefinitions } from './core.js';
import { eventsDefinitions } from './events.js';
import { metaDefinitions } from './meta.js';
import { mergeDefinitions } from './util.js';

export { BUILTIN_GROUP_VERSIONS, metaDefinitions } from './meta.js';
export { coreDefinitions } from './core.js';
export { eventsDefinitions } from './events.js';
export { coordinationDefinitions } from './coordination.js';

export const builtinDefinitions: Definitions = mergeDefinitions(metaDefinitions, coreDefinitions, eventsDefinitions, coordinationDefinitions);
