// Admission: the interfaces plugins implement and the chain handlers run.
export type {
  AdmissionAttributes,
  AnnotationSink,
  AdmissionHandles,
  AdmissionOperation,
  AdmissionPlugin,
  MutationInterface,
  UserInfo,
  ValidationInterface,
  WarningSink,
} from './interfaces.js';
export { AdmissionChain, unlessIdle } from './chain.js';
