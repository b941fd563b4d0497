import type { FastifyInstance } from 'fastify';
import type { AssetService } from './service.js';

/** How long journalled bytes may wait for their row before a sweep of a shared bucket removes them. */
const SHARED_SWEEP_GRACE_SECONDS = 6 * 3600;
const SHARED_SWEEP_EVERY_MS = 15 * 60 * 1000;

/**
 * Removes the bytes that interrupted writes left with no asset using them: once as the app
 * gets ready, and every quarter of an hour after when the bytes are shared.
 *
 * Bytes on local disk belong to this one instance, so whatever is journalled at start was cut
 * off by a stop. In a shared bucket another instance may be uploading right now: only what is
 * hours old is swept there.
 */
export function sweepOrphanedBlobs(app: FastifyInstance, assets: AssetService, { shared }: { shared: boolean }): void {
  const graceSeconds = shared ? SHARED_SWEEP_GRACE_SECONDS : 0;
  // A sweep that cannot run now (on SQLite, an import holding the one writer) is logged and
  // left to a later one; it never stops the start.
  const sweep = async () => {
    try {
      const swept = await assets.sweepOrphanedBlobs(graceSeconds);
      if (swept > 0) app.log.info({ swept }, 'removed bytes that no asset uses, left by interrupted writes');
    } catch (error) {
      app.log.error({ err: error }, 'sweep failed; a later one removes what it left');
    }
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await sweep();
    if (shared) timer = setInterval(sweep, SHARED_SWEEP_EVERY_MS).unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
