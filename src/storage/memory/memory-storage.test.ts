import { storageConformance } from '../conformance/conformance.js';
import { MemoryStorage } from './memory-storage.js';

storageConformance('memory', async () => {
  const storage = new MemoryStorage();
  return { storage, cleanup: () => storage.close() };
});
