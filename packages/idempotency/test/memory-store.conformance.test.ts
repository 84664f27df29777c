import { MemoryStore } from '../src/memory-store';
import { describeStoreConformance } from './store-conformance';

describeStoreConformance('MemoryStore', async () => {
  const store = new MemoryStore();
  return { store, teardown: () => store.close() };
});
