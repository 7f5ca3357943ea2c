// KEP-0007's server flow: the leader over identity Leases, the Feature state machine, its tasks.
export { chooseLeader, featureFlow, mergeTasks, tasksFromGatedFields, type FeatureFlow, type FeatureFlowOptions } from './controller.js';
export {
  CLEAR_FIELD,
  CUSTOM,
  DELETE_COLLECTION,
  reconcileFeature,
  transitionTasks,
  usesVerdict,
  WAIT_FOR_OBJECTS_REMOVED,
  WAIT_FOR_USES,
  type FeatureTasks,
  type FlowEvent,
  type KnownFeature,
  type MachineInput,
  type TaskTemplate,
} from './machine.js';
export { backoffMs, clearField, hasField, parseResource, runTask, type CustomTask, type DirectResource, type DirectWrites } from './tasks.js';
