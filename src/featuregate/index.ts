export * from './feature-gate.js';
export * from './testing.js';
export * from './version.js';
export * from './emulation.js';
export * from './kube-features.js';
