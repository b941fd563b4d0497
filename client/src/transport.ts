/**
 * How the client talks HTTP: the API key on every request, query strings in the API's form,
 * 429s waited out by their Retry-After, network failures retried where repeating is safe, and
 * every failure thrown as one AcdsError.
 */

/** A failed request: the HTTP status (0 when the service could not be reached), the API's message and the request's id. */
export class AcdsError extends Error {
  override readonly name = 'AcdsError';

  constructor(
    /** The HTTP status, or 0 when no answer came (a network failure). */
    readonly status: number,
    /** The API's own message, meant for a person: what to fix. */
    message: string,
    /** The X-Request-Id of the answer: the service's log has the details under it. */
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  /** The most a request waits out 429s in all, in seconds, by their Retry-After (default 60; 0 never waits). */
  maxRateLimitWaitSeconds?: number;
  /** How many times a request that is safe to repeat is repeated after a network failure (default 2). */
  networkRetries?: number;
  /** Told before each wait for a 429, with the seconds it will wait: a page can say so meanwhile. */
  onRateLimitWait?: (seconds: number) => void;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** What each call may say about itself. */
export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * Whether a 429 is waited out (default true); false throws it at once as an AcdsError with
   * status 429. An upload from a stream is never waited out: the stream has been read, so the
   * 429 is thrown and a new stream is needed to try again.
   */
  waitOutRateLimit?: boolean;
}

/**
 * A query's values as the client takes them: lists are sent comma-separated, as the API reads
 * them, a value holding a comma or a quote quoted as in CSV.
 */
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number)[];

interface Call extends RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, QueryValue>;
  /** Makes the request's body afresh for each attempt; undefined for none. */
  body?: () => { body: BodyInit; headers?: Record<string, string>; stream?: boolean };
  /** Whether the body can be sent again (a stream cannot). */
  replayable?: boolean;
  /** Whether a redirect is answered as it came; otherwise it is an error. */
  answerRedirect?: boolean;
}

const DEFAULT_RATE_LIMIT_WAIT_SECONDS = 60;
const DEFAULT_NETWORK_RETRIES = 2;

export class Transport {
  private readonly baseUrl: string;
  private readonly fetch: typeof globalThis.fetch;
  private readonly maxWaitSeconds: number;
  private readonly networkRetries: number;

  constructor(private readonly options: TransportOptions) {
    if (!options.apiKey) throw new TypeError('AcdsClient needs an apiKey');
    this.baseUrl = new URL(options.baseUrl).href.replace(/\/$/, '');
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxWaitSeconds = options.maxRateLimitWaitSeconds ?? DEFAULT_RATE_LIMIT_WAIT_SECONDS;
    this.networkRetries = options.networkRetries ?? DEFAULT_NETWORK_RETRIES;
  }

  private url(path: string, query: Record<string, QueryValue> = {}): string {
    const search = queryString(query);
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  async json<T>(call: Call): Promise<T> {
    const response = await this.send(call);
    return (await response.json()) as T;
  }

  /**
   * Sends a call and answers its response when it is a success. A 429 is waited out while the
   * waits stay within maxRateLimitWaitSeconds (the service did nothing with the request, so
   * any request may be sent again, if its body can be); a network failure is retried only for
   * GET, PUT and DELETE, which mean the same when repeated.
   */
  async send({ method, path, query, body, replayable = true, signal, waitOutRateLimit = true, answerRedirect = false }: Call): Promise<Response> {
    const url = this.url(path, query);
    const safeToRepeat = replayable && method !== 'POST';
    let waitedSeconds = 0;
    for (let networkFailures = 0; ; ) {
      let response: Response;
      try {
        const made = body?.();
        const init: RequestInit & { duplex?: 'half' } = {
          method,
          headers: { 'x-api-key': this.options.apiKey, ...made?.headers },
          body: made?.body,
          signal,
          // Fetch would follow a redirect with the key, which is for the service alone: a
          // remote asset's content answers with its url, on another host.
          redirect: 'manual',
        };
        // A streamed body is sent as it is read: fetch wants to be told.
        if (made?.stream) init.duplex = 'half';
        response = await this.fetch(url, init);
      } catch (error) {
        if (signal?.aborted) throw error;
        if (safeToRepeat && networkFailures < this.networkRetries) {
          networkFailures += 1;
          await sleep(250 * 2 ** networkFailures, signal);
          continue;
        }
        throw new AcdsError(0, `could not reach ${this.baseUrl}: ${(error as Error).message}`, undefined, { cause: error });
      }
      if (response.status === 429 && waitOutRateLimit && replayable) {
        const seconds = retryAfterSeconds(response.headers.get('retry-after'));
        if (waitedSeconds + seconds <= this.maxWaitSeconds) {
          waitedSeconds += seconds;
          this.options.onRateLimitWait?.(seconds);
          await response.body?.cancel();
          await sleep(seconds * 1000, signal);
          continue;
        }
      }
      if (answerRedirect && isRedirect(response)) return response;
      if (!response.ok) throw await errorOf(response);
      return response;
    }
  }

  /** The bytes at a URL outside the service, fetched without the key. */
  async fetchElsewhere(url: string, signal?: AbortSignal): Promise<Uint8Array> {
    let response: Response;
    try {
      response = await this.fetch(url, { signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new AcdsError(0, `could not reach ${url}: ${(error as Error).message}`, undefined, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new AcdsError(response.status, `${url} answered ${response.status}`, undefined);
    }
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** A redirect, as fetch gives it with `redirect: 'manual'`: in a browser, opaque (status 0, no Location). A 304 is none. */
export function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400 && response.status !== 304);
}

/** The query string of `query`: undefined and null values left out, lists comma-separated. */
function queryString(query: Record<string, QueryValue>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.append(name, Array.isArray(value) ? value.map(listItem).join(',') : String(value));
  }
  return params.toString();
}

/**
 * One value of a list as the API splits lists, as one CSV record: in double quotes, a quote
 * inside doubled, when it holds a comma, a quote or a line break, or is empty (which the bare
 * form would make no value at all).
 */
function listItem(value: string | number): string {
  const text = String(value);
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Retry-After in seconds (the API sends seconds; an HTTP date is read too); 1 when absent,
 * unreadable or under a second, so that waits always add up towards maxRateLimitWaitSeconds.
 */
function retryAfterSeconds(header: string | null): number {
  if (header === null || header.trim() === '') return 1;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(1, Math.ceil(seconds));
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1 : Math.max(1, Math.ceil((date - Date.now()) / 1000));
}

/** The AcdsError of a failed response: the API's message is its JSON-string body. */
async function errorOf(response: Response): Promise<AcdsError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const text = await response.text().catch(() => '');
  let message: string;
  try {
    const parsed: unknown = JSON.parse(text);
    message = typeof parsed === 'string' ? parsed : text;
  } catch {
    message = text;
  }
  if (response.status === 429 && message === '') message = rateLimitMessage(response.headers.get('retry-after'));
  return new AcdsError(response.status, message || `${response.status} ${response.statusText}`, requestId);
}

/** A 429's message when its body has none: the wait its Retry-After asks for, as the service said it. */
function rateLimitMessage(retryAfter: string | null): string {
  const header = retryAfter?.trim() ?? '';
  const asked = header === '' ? 'a moment' : Number.isFinite(Number(header)) ? `${Number(header)} s` : `until ${header}`;
  return `too many requests; the service asks to wait ${asked}`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
