/**
 * The one error type the service throws on purpose. Its message is written for the person
 * calling the API and is sent to them as a JSON string; anything else is a 500 whose details
 * stay in the log.
 */
export class AppError extends Error {
  constructor(
    readonly statusCode: 400 | 401 | 404 | 409 | 413,
    message: string,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string) => new AppError(400, message);
export const unauthorized = (message: string) => new AppError(401, message);
export const notFound = (message: string) => new AppError(404, message);
