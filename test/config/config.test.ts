import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

/** Configuration (docs/deployment.md, "Configuration"): defaults, and a bad value names its variable. */

describe('configuration from the environment', () => {
  test('with nothing set, every setting takes its documented default', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.deepEqual(config.rateLimit, { max: 60, windowMs: 60_000 });
    assert.deepEqual(config.publicRateLimit, { max: 6000, windowMs: 60_000 });
    assert.equal(config.rateLimitIpv6Prefix, 64);
    assert.equal(config.publicUrl, undefined);
    assert.equal(config.trustProxy, undefined);
    assert.deepEqual(config.corsOrigins, [], 'no other origin calls the API from a browser unless configured');
    assert.equal(config.maxUploadBytes, 104_857_600);
    assert.equal(config.requestTimeoutMs, 600_000);
    assert.equal(config.idleTimeoutMs, 30_000);
    assert.equal(config.requestStatementTimeoutMs, 15_000);
    assert.deepEqual(config.columnar, { memoryMiB: 128, threads: 1 });
    assert.equal(config.s3, undefined);
    assert.equal(config.bootstrapApiKey, undefined);
    assert.equal(config.logLevel, 'info');
  });

  test('every variable is read', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/acds',
      DATABASE_URL: 'postgres://u@db/acds',
      REDIS_URL: 'redis://cache:6379',
      RATE_LIMIT_PER_MINUTE: '0',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_IPV6_PREFIX: '48',
      PUBLIC_URL: 'https://Assets.Example.com/acds/',
      TRUST_PROXY: '10.0.0.1, 192.168.0.0/16',
      CORS_ORIGINS: 'https://Shop.Example.com, http://localhost:5173,https://pay.example.com:443',
      MAX_UPLOAD_BYTES: '1024',
      REQUEST_TIMEOUT_MS: '1200000',
      IDLE_TIMEOUT_MS: '5000',
      STATEMENT_TIMEOUT_MS: '2500',
      COLUMNAR_MEMORY_MIB: '256',
      COLUMNAR_THREADS: '2',
      BOOTSTRAP_API_KEY: 'a-long-enough-bootstrap-key',
      LOG_LEVEL: 'WARN',
      S3_BUCKET: 'acds-assets',
      S3_ENDPOINT: 'http://minio:9000',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      S3_FORCE_PATH_STYLE: 'true',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, '/var/lib/acds');
    assert.equal(config.databaseUrl, 'postgres://u@db/acds');
    assert.equal(config.redisUrl, 'redis://cache:6379');
    assert.equal(config.rateLimit.max, 0);
    assert.equal(config.publicRateLimit.max, 0);
    assert.equal(config.rateLimitIpv6Prefix, 48);
    assert.equal(config.publicUrl, 'https://assets.example.com/acds', 'as the URL standard writes it, without the trailing slash');
    assert.deepEqual(config.trustProxy, ['10.0.0.1', '192.168.0.0/16']);
    assert.deepEqual(config.corsOrigins, ['https://shop.example.com', 'http://localhost:5173', 'https://pay.example.com'], 'as browsers send them');
    assert.equal(config.maxUploadBytes, 1024);
    assert.equal(config.requestTimeoutMs, 1_200_000);
    assert.equal(config.idleTimeoutMs, 5000);
    assert.equal(config.requestStatementTimeoutMs, 2500);
    assert.deepEqual(config.columnar, { memoryMiB: 256, threads: 2 });
    assert.equal(config.bootstrapApiKey, 'a-long-enough-bootstrap-key');
    assert.equal(config.logLevel, 'warn');
    assert.deepEqual(config.s3, {
      bucket: 'acds-assets',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      accessKeyId: 'id',
      secretAccessKey: 'secret',
      forcePathStyle: true,
    });
  });

  test('PUBLIC_URL is kept as the URL standard writes it, with its path and without a trailing slash', () => {
    for (const [raw, kept] of [
      ['https://assets.example.com', 'https://assets.example.com'],
      ['https://assets.example.com/', 'https://assets.example.com'],
      ['http://assets.example.com:80/', 'http://assets.example.com'],
      ['http://[::1]:8080', 'http://[::1]:8080'],
      ['https://example.com/static/acds//', 'https://example.com/static/acds'],
      ['https://bücher.example/', 'https://xn--bcher-kva.example'],
    ]) {
      assert.equal(loadConfig({ PUBLIC_URL: raw }).publicUrl, kept, raw);
    }
  });

  test('CORS_ORIGINS is * alone, or origins kept as browsers send them', () => {
    for (const [raw, kept] of [
      ['*', ['*']],
      ['http://[::1]:8080', ['http://[::1]:8080']],
      ['https://bücher.example', ['https://xn--bcher-kva.example']],
      [' https://a.example , , https://b.example ', ['https://a.example', 'https://b.example']],
    ] as const) {
      assert.deepEqual(loadConfig({ CORS_ORIGINS: raw }).corsOrigins, kept, raw);
    }
  });

  test('HOST is an IPv4 or IPv6 address or a host name', () => {
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'acds-1.internal', '127.0.0.1']) assert.equal(loadConfig({ HOST: host }).host, host);
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ HOST: '0.0.0.0:3000' }, 'HOST'],
    [{ HOST: 'http://localhost' }, 'HOST'],
    [{ DATABASE_URL: 'mysql://db/acds' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://cache' }, 'REDIS_URL'],
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ PUBLIC_RATE_LIMIT_PER_MINUTE: 'many' }, 'PUBLIC_RATE_LIMIT_PER_MINUTE'],
    [{ RATE_LIMIT_IPV6_PREFIX: '31' }, 'RATE_LIMIT_IPV6_PREFIX'],
    [{ RATE_LIMIT_IPV6_PREFIX: '129' }, 'RATE_LIMIT_IPV6_PREFIX'],
    [{ RATE_LIMIT_IPV6_PREFIX: '/64' }, 'RATE_LIMIT_IPV6_PREFIX'],
    [{ PUBLIC_URL: 'assets.example.com' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://assets.example.com' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://assets.example.com/?v=1' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://assets.example.com/?' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://assets.example.com/#top' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://user:secret@assets.example.com' }, 'PUBLIC_URL'],
    [{ TRUST_PROXY: 'proxy.internal' }, 'TRUST_PROXY'],
    [{ CORS_ORIGINS: 'shop.example.com' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://shop.example.com/' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://shop.example.com/checkout' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://shop.example.com?x' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://user@shop.example.com' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'ftp://shop.example.com' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: '*, https://shop.example.com' }, 'CORS_ORIGINS'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ MAX_UPLOAD_BYTES: '0' }, 'MAX_UPLOAD_BYTES'],
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: '10m' }, 'REQUEST_TIMEOUT_MS'],
    [{ IDLE_TIMEOUT_MS: '999' }, 'IDLE_TIMEOUT_MS'],
    [{ STATEMENT_TIMEOUT_MS: '99' }, 'STATEMENT_TIMEOUT_MS'],
    [{ STATEMENT_TIMEOUT_MS: '30000' }, 'STATEMENT_TIMEOUT_MS'],
    [{ STATEMENT_TIMEOUT_MS: '60000', IDLE_TIMEOUT_MS: '45000' }, 'STATEMENT_TIMEOUT_MS'],
    [{ COLUMNAR_MEMORY_MIB: '32' }, 'COLUMNAR_MEMORY_MIB'],
    [{ COLUMNAR_THREADS: '0' }, 'COLUMNAR_THREADS'],
    [{ BOOTSTRAP_API_KEY: 'short' }, 'BOOTSTRAP_API_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ S3_BUCKET: 'Not_A_Bucket' }, 'S3_BUCKET'],
    [{ S3_ENDPOINT: 'http://minio:9000' }, 'S3_ENDPOINT'],
    [{ S3_BUCKET: 'acds', S3_ACCESS_KEY_ID: 'id' }, 'S3_SECRET_ACCESS_KEY'],
    [{ S3_BUCKET: 'acds', S3_FORCE_PATH_STYLE: 'maybe' }, 'S3_FORCE_PATH_STYLE'],
  ];
  for (const [env, variable] of bad) {
    test(`${JSON.stringify(env)} is refused, naming ${variable}`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${variable} `),
      );
    });
  }
});
