export * from './storage.js';
export { MemoryStorage, openMemoryStorage, compareKeys } from './memory/memory-storage.js';
export type { MemoryStorageOptions } from './memory/memory-storage.js';
export { WatchChannel } from './cacher/watch-channel.js';
export type { WatchChannelOptions } from './cacher/watch-channel.js';
export { SqliteStorage, openSqliteStorage } from './sqlite/sqlite-storage.js';
export type { SqliteStorageOptions } from './sqlite/sqlite-storage.js';
export { EtcdStorage, openEtcdStorage } from './etcd/etcd-storage.js';
export type { EtcdStorageOptions } from './etcd/etcd-storage.js';
