import { createRequire } from 'node:module';

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;
interface Store {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
}

const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean, cache: number) => Store = createRequire(import.meta.url)(
  '@fastify/rate-limit/store/LocalStore.js',
);

/**
 * @fastify/rate-limit's in-process store, answering each request with a snapshot of its
 * client's counter. The store itself hands every request the one shared counter object, so
 * requests that arrive together (a pipelined burst) all read the count the last of them left:
 * 61 at once were all refused, not only the 61st.
 */
export function snapshotMemoryStore(clients: number) {
  return class SnapshotMemoryStore {
    private readonly store = new LocalStore(false, false, clients);

    incr(key: string, callback: Callback, timeWindow: number, max: number): void {
      this.store.incr(key, (error, result) => callback(error, result && { current: result.current, ttl: result.ttl }), timeWindow, max);
    }

    child() {
      return new SnapshotMemoryStore();
    }
  };
}
