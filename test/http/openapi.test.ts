/**
 * The OpenAPI document at /openapi.json, as a client generator reads it: clean under Redocly's
 * recommended rules, every filter form of every column declared with its column's type,
 * operations named, schemas named, and the answers every operation shares declared once.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { assetCatalogue } from '../../src/assets/schema.js';
import { cartEventCatalogue } from '../../src/carts/schema.js';
import { conversionCatalogue } from '../../src/conversions/schema.js';
import { MODIFIERS } from '../../src/filters/parse.js';
import { type TestContext, startTestApp } from '../helpers/app.js';

interface Parameter {
  name: string;
  in: string;
  schema: { type?: string; items?: { type?: string }; minItems?: number; maxItems?: number };
  style?: string;
  explode?: boolean;
}
interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  responses: Record<string, { $ref?: string; description?: string; headers?: Record<string, unknown> }>;
}
type OpenApi = {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, { description?: string; headers: Record<string, unknown> }> };
};

describe('the OpenAPI document', () => {
  let ctx: TestContext;
  let document: OpenApi;
  let source: string;
  before(async () => {
    ctx = await startTestApp('sqlite', { publicUrl: 'https://funnels.acds.test/v' });
    source = (await ctx.app.inject({ url: '/openapi.json' })).body;
    document = JSON.parse(source);
  });
  after(() => ctx?.close());

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));

  test("passes `redocly lint` under Redocly's recommended rules (redocly.yaml) with no error and no warning", async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'acds-openapi-'));
    try {
      const file = path.join(folder, 'openapi.json');
      await writeFile(file, source);
      // The CLI exits 1 on an error; its JSON report on stdout lists warnings too.
      const lint = await promisify(execFile)('node_modules/.bin/redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', file], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((failure: Error & { stdout: string; stderr: string }) => failure);
      let report: { problems: { severity: string; ruleId: string; message: string; location: { pointer?: string }[] }[] };
      try {
        report = JSON.parse(lint.stdout);
      } catch {
        // The CLI did not run to its report (not installed, or it crashed): say so, with what it printed.
        const why = 'message' in lint ? lint.message : '';
        assert.fail(`redocly lint printed no JSON report: ${why}\nits standard error:\n${lint.stderr}\nits standard output:\n${lint.stdout}`);
      }
      const shown = report.problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
      assert.deepEqual(shown, []);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test('names the public URL as its server, every operation with an id of its own, and its entry schemas by name', () => {
    assert.deepEqual(
      document.servers.map((server) => server.url),
      ['https://funnels.acds.test/v'],
    );
    const ids = operations().map(({ operation }) => operation.operationId);
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)),
      ids.join(' '),
    );
    assert.equal(new Set(ids).size, ids.length, `operation ids repeat: ${ids.join(' ')}`);
    for (const name of ['ConversionEntry', 'CartEventEntry', 'AssetEntry']) assert.ok(name in document.components.schemas, `${name} is a named schema`);
    assert.ok(!Object.keys(document.components.schemas).some((name) => name.startsWith('def-')), Object.keys(document.components.schemas).join(' '));
  });

  test('describes every answer of every operation in its own words', () => {
    const undescribed = operations().flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses)
        .map(([status, response]) => [status, response.$ref ? document.components.responses[response.$ref.split('/').at(-1)!] : response] as const)
        .filter(([, response]) => !response?.description || response.description === 'Default Response')
        .map(([status]) => `${method} ${path} ${status}`),
    );
    assert.deepEqual(undescribed, []);
  });

  test('declares every form of every filter of each list, typed as its column, with page a whole number', () => {
    for (const [path, catalogue] of [
      ['/api/v1/conversions', conversionCatalogue],
      ['/api/v1/assets', assetCatalogue],
      ['/api/v1/cart-events', cartEventCatalogue],
    ] as const) {
      const parameters = new Map(document.paths[path]!.get!.parameters!.map((parameter) => [parameter.name, parameter]));
      assert.equal(parameters.get('page')?.schema.type, 'integer');
      for (const column of catalogue.values()) {
        const forms = column.type === 'boolean' ? [column.name] : [column.name, ...MODIFIERS.map((modifier) => `${column.name}.${modifier}`)];
        for (const form of forms) assert.ok(parameters.has(form), `${path} declares ${form}`);
      }
      assert.equal(parameters.size, 1 + [...catalogue.values()].reduce((sum, column) => sum + (column.type === 'boolean' ? 1 : 1 + MODIFIERS.length), 0));
    }
    const conversions = new Map(document.paths['/api/v1/conversions']!.get!.parameters!.map((parameter) => [parameter.name, parameter]));
    assert.equal(conversions.get('amount.gte')?.schema.type, 'number');
    assert.equal(conversions.get('id.gt')?.schema.type, 'integer');
    assert.equal(conversions.get('utm_source')?.schema.type, 'string');
    const carts = conversions.get('cart_integration.in')!;
    assert.deepEqual([carts.schema.type, carts.schema.items?.type, carts.style, carts.explode], ['array', 'string', 'form', false]);
    const between = conversions.get('created_at.between')!;
    assert.deepEqual([between.schema.minItems, between.schema.maxItems], [2, 2]);
  });

  test('refers every operation of the API to the shared 400, 401, 429, 500 and 503 answers, which carry the request id and the rate limit; an asset write to no 503', () => {
    const assetWrites = ['createAsset', 'updateAsset', 'deleteAsset'];
    for (const { path, method, operation } of operations().filter(({ path }) => path.startsWith('/api/'))) {
      const answersUnavailable = !assetWrites.includes(operation.operationId!);
      for (const [status, name] of [
        ['400', 'BadRequest'],
        ['401', 'Unauthorized'],
        ['429', 'TooManyRequests'],
        ['500', 'InternalError'],
        ['503', 'Unavailable'],
      ] as const) {
        const expected = status === '503' && !answersUnavailable ? undefined : `#/components/responses/${name}`;
        assert.equal(operation.responses[status]?.$ref, expected, `${method} ${path} ${status}`);
      }
    }
    for (const path of ['/api/v1/assets/{id}', '/api/v1/assets/{id}/content'])
      assert.equal(document.paths[path]!.get!.responses['404']?.$ref, '#/components/responses/NotFound', path);
    const tooMany = document.components.responses.TooManyRequests!;
    for (const header of ['Retry-After', 'X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      assert.ok(header in tooMany.headers, header);
  });

  // Redocly's no-invalid-*-examples rules (redocly.yaml) check each example against its schema.
  test('gives examples of every entry, the summary, every error, the form fields and the filters the example entry has values for', () => {
    for (const [name, schema] of Object.entries(document.components.schemas)) assert.ok('example' in (schema as object), name);
    for (const [name, answer] of Object.entries(document.components.responses as Record<string, { content?: Record<string, { example?: unknown }> }>)) {
      if (answer.content) assert.equal(typeof answer.content['application/json']?.example, 'string', name);
    }
    const summary = document.paths['/api/v1/conversions/summary']!.get!.responses['200'] as unknown as { content: Record<string, { example?: unknown }> };
    assert.ok(summary.content['application/json']!.example);
    const exported = document.paths['/api/v1/conversions/export']!.get!.responses['200'] as unknown as {
      content: Record<string, { example?: string }>;
      headers: Record<string, unknown>;
    };
    assert.match(exported.content['application/x-ndjson']!.example!, /^\{"id":2,.*\}\n$/);
    assert.match(exported.content['text/csv']!.example!, /^id,created_at,.*\r\n2,2026-03-01T09:19:30Z,clickbank,CB-1002,.*\r\n$/);
    assert.ok(exported.headers['content-disposition']);
    const form = (
      document.paths['/api/v1/assets']!.post as unknown as {
        requestBody: { content: Record<string, { schema: { properties: Record<string, { example?: unknown }> } }> };
      }
    ).requestBody.content['multipart/form-data']!.schema.properties;
    assert.equal(form.name?.example, 'hero.png');
    const parameters = new Map(
      document.paths['/api/v1/conversions']!.get!.parameters!.map((parameter) => [parameter.name, parameter as Parameter & { example?: unknown }]),
    );
    assert.equal(parameters.get('utm_source')?.example, 'facebook');
    assert.equal(parameters.get('amount.gte')?.example, 117);
    assert.deepEqual(parameters.get('cart_integration.in')?.example, ['clickbank']);
    assert.equal(parameters.get('tracking_codes')?.example, 'tc-facebook', "an array column's example is one of its elements");
    assert.equal(parameters.get('mobile')?.example, 'true', 'as a boolean filter is written');
    assert.equal(parameters.get('joint_venture_order')?.example, undefined, 'null in the example entry: no example');
  });
});

describe('the OpenAPI document of a listening service', () => {
  test('is made once, as the service starts listening, not while a client waits for it', async () => {
    const ctx = await startTestApp('sqlite');
    try {
      const { app } = ctx;
      let made = 0;
      const swagger = app.swagger.bind(app);
      app.swagger = new Proxy(swagger, {
        apply: (target, self, args) => {
          made += 1;
          return Reflect.apply(target, self, args);
        },
      });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      assert.equal(made, 1, 'made as the service starts listening');
      const bodies = await Promise.all(
        [1, 2].map(async () => {
          const response = await fetch(`${address}/openapi.json`);
          assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
          return response.text();
        }),
      );
      assert.equal(made, 1, 'sent as it was made');
      assert.equal(bodies[0], bodies[1]);
      assert.deepEqual(JSON.parse(bodies[0]!), await swagger());
    } finally {
      await ctx.close();
    }
  });
});
