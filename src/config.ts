import { isIP } from 'node:net';
import path from 'node:path';
import type { S3Options } from './storage/s3-blob-store.js';

/**
 * Everything the service reads from its environment, checked once at start; docs/deployment.md,
 * "Configuration", lists every variable and its default.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** `postgres://...` selects PostgreSQL; undefined means SQLite in `dataDir`. */
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  rateLimit: {
    /** Requests per window per client IP; 0 turns the limit off. */
    max: number;
    /** Window length. Always one minute in production; tests shorten it. */
    windowMs: number;
  };
  /** The same for public asset delivery (`/public/...`), counted apart from the API. */
  publicRateLimit: { max: number; windowMs: number };
  /** Cart notifications (`/hooks/...`) per window per receiver: carts send from few addresses, so they count by URL token, not by IP. */
  hookRateLimit: { max: number; windowMs: number };
  /** IPv6 clients are limited by this many leading bits of their address: one counter per /64 by default. */
  rateLimitIpv6Prefix: number;
  /**
   * What every `public_url` starts with (scheme, host, optional path, no trailing slash);
   * undefined means where the service listens, `http://HOST:PORT`.
   */
  publicUrl: string | undefined;
  /**
   * Web origins (`https://shop.example.com`) whose pages may call the API from a browser, or
   * `['*']` for any; empty keeps the API to programs and same-origin pages. Public asset URLs
   * are readable from any origin whatever this says.
   */
  corsOrigins: string[];
  /** Proxies allowed to set X-Forwarded-For (IPs or CIDR ranges); undefined trusts none. */
  trustProxy: string[] | undefined;
  maxUploadBytes: number;
  /** The longest a request may take to arrive whole, headers and body; slower ones are cut off with a 408. */
  requestTimeoutMs: number;
  /** A connection that moves no bytes either way for this long is closed, a stalled upload with it. */
  idleTimeoutMs: number;
  /**
   * A database statement of a request running longer is stopped and the request answered 503.
   * Named apart from DatabaseOptions.statementTimeoutMs, so that a database opened from the
   * whole configuration (the command line's) gets no limit unless it asks for this one.
   */
  requestStatementTimeoutMs: number;
  /** The columnar index of conversions (DuckDB): its memory_limit and its threads. */
  columnar: { memoryMiB: number; threads: number };
  /** Set (by S3_BUCKET) when asset bytes live in S3 rather than under `dataDir`. */
  s3: S3Options | undefined;
  bootstrapApiKey: string | undefined;
  logLevel: LogLevel;
}

/** The smallest COLUMNAR_MEMORY_MIB: the index's checkpoint of its widest row groups needs about 40 MB. */
export const MIN_COLUMNAR_MEMORY_MIB = 64;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const config: Config = {
    port: integerVar('PORT', read('PORT'), 3000, 0, 65535),
    host: hostVar('HOST', read('HOST')) ?? '127.0.0.1',
    dataDir: path.resolve(read('DATA_DIR') ?? './data'),
    databaseUrl: urlVar('DATABASE_URL', read('DATABASE_URL'), ['postgres:', 'postgresql:']),
    redisUrl: urlVar('REDIS_URL', read('REDIS_URL'), ['redis:', 'rediss:']),
    rateLimit: {
      max: integerVar('RATE_LIMIT_PER_MINUTE', read('RATE_LIMIT_PER_MINUTE'), 60, 0, 1_000_000_000),
      windowMs: 60_000,
    },
    // A page embeds dozens of assets and many visitors may share one address (a NAT): the public
    // ceiling only stops one address from hammering the service.
    publicRateLimit: {
      max: integerVar('PUBLIC_RATE_LIMIT_PER_MINUTE', read('PUBLIC_RATE_LIMIT_PER_MINUTE'), 6000, 0, 1_000_000_000),
      windowMs: 60_000,
    },
    // Far above any cart's real pace (Konnektive sends its batch every 15 minutes), so that only a
    // flood through one leaked URL is held back.
    hookRateLimit: {
      max: integerVar('HOOK_RATE_LIMIT_PER_MINUTE', read('HOOK_RATE_LIMIT_PER_MINUTE'), 120_000, 0, 1_000_000_000),
      windowMs: 60_000,
    },
    rateLimitIpv6Prefix: integerVar('RATE_LIMIT_IPV6_PREFIX', read('RATE_LIMIT_IPV6_PREFIX'), 64, 32, 128),
    publicUrl: publicUrlVar(read('PUBLIC_URL')),
    corsOrigins: corsOriginsVar(read('CORS_ORIGINS')),
    trustProxy: trustProxyVar(read('TRUST_PROXY')),
    maxUploadBytes: integerVar('MAX_UPLOAD_BYTES', read('MAX_UPLOAD_BYTES'), 104_857_600, 1, Number.MAX_SAFE_INTEGER),
    // Ten minutes lets a 1 GiB upload arrive at under 2 MB/s; half a minute of silence is not a slow client but a gone or hostile one.
    requestTimeoutMs: integerVar('REQUEST_TIMEOUT_MS', read('REQUEST_TIMEOUT_MS'), 600_000, 1000, 86_400_000),
    idleTimeoutMs: integerVar('IDLE_TIMEOUT_MS', read('IDLE_TIMEOUT_MS'), 30_000, 1000, 3_600_000),
    requestStatementTimeoutMs: integerVar('STATEMENT_TIMEOUT_MS', read('STATEMENT_TIMEOUT_MS'), 15_000, 100, 3_600_000),
    columnar: {
      memoryMiB: integerVar('COLUMNAR_MEMORY_MIB', read('COLUMNAR_MEMORY_MIB'), 128, MIN_COLUMNAR_MEMORY_MIB, 1_048_576),
      threads: integerVar('COLUMNAR_THREADS', read('COLUMNAR_THREADS'), 1, 1, 64),
    },
    s3: s3Vars(read),
    bootstrapApiKey: bootstrapKeyVar(read('BOOTSTRAP_API_KEY')),
    logLevel: logLevelVar(read('LOG_LEVEL')),
  };
  // The connection's idle timeout would close a request's connection while its statement still ran.
  if (config.requestStatementTimeoutMs >= config.idleTimeoutMs) {
    throw new ConfigError(
      'STATEMENT_TIMEOUT_MS',
      `(${config.requestStatementTimeoutMs}) must be less than IDLE_TIMEOUT_MS (${config.idleTimeoutMs}), which closes a connection that stays silent that long, a request still being answered included: lower the one or raise the other`,
    );
  }
  return config;
}

function integerVar(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** An address to listen on: an IP address or a host name, without a port (that is PORT). */
function hostVar(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || isIP(raw) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(raw)) return raw;
  throw new ConfigError(name, `must be an IP address or a host name such as 0.0.0.0 or localhost, without a port (that is PORT), got "${raw}"`);
}

function urlVar(name: string, raw: string | undefined, protocols: string[]): string | undefined {
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

/** PUBLIC_URL: an http(s) URL with an optional path prefix, returned without a trailing slash. */
function publicUrlVar(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const problem = 'must be an http:// or https:// URL such as https://assets.example.com or https://example.com/acds';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_URL', `${problem}, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('PUBLIC_URL', `${problem}, got "${raw}"`);
  if (raw.includes('?') || raw.includes('#')) throw new ConfigError('PUBLIC_URL', 'must not have a query or a fragment (nothing from ? or #)');
  if (url.username !== '' || url.password !== '') throw new ConfigError('PUBLIC_URL', 'must not hold a user name or password');
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** CORS_ORIGINS: `*` alone, or comma-separated origins, each a scheme, host and optional port. */
function corsOriginsVar(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError('CORS_ORIGINS', 'must be * alone or a list of origins, not both');
    return entries;
  }
  return entries.map((entry) => {
    const problem = `must list origins such as https://shop.example.com (a scheme, a host and an optional port; no path), and "${entry}" is not one`;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError('CORS_ORIGINS', problem);
    }
    // A browser sends its page's origin alone, so an entry with more (a path, even a trailing
    // slash) would never match; the host's case and a default port are normalised away.
    const scheme = `${url.protocol}//`;
    const onlyOrigin = entry.toLowerCase().startsWith(scheme) && !/[/?#@\\]/.test(entry.slice(scheme.length));
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !onlyOrigin) throw new ConfigError('CORS_ORIGINS', problem);
    return url.origin;
  });
}

function trustProxyVar(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!isIpOrCidr(entry)) {
      throw new ConfigError('TRUST_PROXY', `must list IP addresses or CIDR ranges, and "${entry}" is neither`);
    }
  }
  return entries;
}

export function isIpOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

function s3Vars(read: (name: string) => string | undefined): S3Options | undefined {
  const bucket = read('S3_BUCKET');
  const others = ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE'];
  if (bucket === undefined) {
    const stray = others.find((name) => read(name) !== undefined);
    if (stray) throw new ConfigError(stray, 'is set but S3_BUCKET is not; set S3_BUCKET to store assets in S3');
    return undefined;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError('S3_BUCKET', 'must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens');
  }
  const accessKeyId = read('S3_ACCESS_KEY_ID');
  const secretAccessKey = read('S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(accessKeyId === undefined ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY', 'must be set together with its pair');
  }
  return {
    bucket,
    endpoint: urlVar('S3_ENDPOINT', read('S3_ENDPOINT'), ['http:', 'https:']),
    region: read('S3_REGION') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: booleanVar('S3_FORCE_PATH_STYLE', read('S3_FORCE_PATH_STYLE'), false),
  };
}

function booleanVar(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (['true', '1'].includes(raw.toLowerCase())) return true;
  if (['false', '0'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function bootstrapKeyVar(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < 20 || raw.length > 200 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError('BOOTSTRAP_API_KEY', 'must be 20 to 200 printable characters without spaces');
  }
  return raw;
}

function logLevelVar(raw: string | undefined): LogLevel {
  if (raw === undefined) return 'info';
  const level = LOG_LEVELS.find((candidate) => candidate === raw.toLowerCase());
  if (!level) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}
