import type { CatchUpProgress } from './protocol.js';

/** Where a catch-up stood at a moment: the largest id indexed, and when that was seen (ms). */
export interface ProgressAt {
  atId: number;
  atMs: number;
}

/**
 * The seconds a catch-up at `progress` at time `nowMs` has left, at the pace it kept since
 * `first` (where it stood when first seen): ids are counted as rows, which gaps make an
 * estimate. Undefined until it has moved.
 */
export function secondsLeft(first: ProgressAt, progress: CatchUpProgress, nowMs: number): number | undefined {
  const idsDone = progress.atId - first.atId;
  const elapsedMs = nowMs - first.atMs;
  if (idsDone <= 0 || elapsedMs <= 0) return undefined;
  return (Math.max(0, progress.toId - progress.atId) * elapsedMs) / idsDone / 1000;
}
