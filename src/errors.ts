/**
 * The one error type the service throws on purpose. Its message is written for the person
 * calling the API and is sent to them as a JSON string; anything else is a 500 whose details
 * stay in the log.
 */
export class AppError extends Error {
  constructor(
    readonly statusCode: 400 | 401 | 404 | 409 | 413 | 503,
    message: string,
    /** Sent as Retry-After where the service can tell when asking again is worth it. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const unauthorized = (message: string) => new AppError(401, message);
export const notFound = (message: string) => new AppError(404, message);

/** A request that reached an instance as it shut down: it was not handled. */
export const shuttingDown = () =>
  new AppError(503, 'this instance is shutting down and did not handle the request: send it again (to another instance, or to this one once it is back)', 1);

/** A write that waited out another writer (an import holding the embedded database) and gave up. */
export const busy = () => new AppError(503, 'the database is busy with another write, such as a conversions import: send this again in a few seconds', 5);

/** A question the database could not answer within the statement time limit (STATEMENT_TIMEOUT_MS). */
export const tooSlow = (limitMs: number) =>
  new AppError(
    503,
    `the database took longer than ${limitMs / 1000} s over this request and it was stopped: ask again later (a list can also be narrowed by more selective filters)`,
  );

/**
 * A question the columnar index of conversions did not answer within the statement time limit:
 * most often while it catches up after a large import, which `percentDone` then says how far it
 * is, and `secondsLeft` (once its pace is known) how long it has to go, which is when to ask again.
 */
export function indexTooSlow(limitMs: number, percentDone: number | undefined, secondsLeft?: number): AppError {
  const seconds = `${limitMs / 1000} s`;
  if (percentDone === undefined) {
    return new AppError(
      503,
      `the index of conversions took longer than ${seconds} over this request: ask again later (a list can also be narrowed by more selective filters)`,
    );
  }
  if (secondsLeft === undefined) {
    return new AppError(
      503,
      `the index of conversions is catching up after a large write (${percentDone}% done) and could not answer within ${seconds}: ask again in a minute`,
      60,
    );
  }
  const toGo = Math.max(1, Math.ceil(secondsLeft));
  const askAgainIn = Math.min(60, toGo);
  return new AppError(
    503,
    `the index of conversions is catching up after a large write (${percentDone}% done, about ${toGo} s to go) and could not answer within ${seconds}: ask again in ${askAgainIn} s`,
    askAgainIn,
  );
}

/** A question about conversions asked while their index cannot open or has just stopped: it is tried again by itself. */
export const indexUnavailable = () =>
  new AppError(503, 'the index of conversions is unavailable for a moment (it is being opened again): ask again in a few seconds', 5);
