import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { genericEvent, genericSignatureHeader, randomSecret } from '../helpers/carts.js';
import { describeEachEngine, freshDatabase, type TestDatabase } from '../helpers/database.js';
import { lastLine, runCli, SERVICE_KEY, type ServiceProcess, spawnService, stopService, succeeded } from '../helpers/processes.js';

/**
 * `carts connect|list|disconnect` as an operator runs them, against the real service in a child
 * process; and a service killed right after it replied, which must have kept what it acknowledged.
 */

describeEachEngine('connecting carts, and a crash right after a reply', (engine) => {
  let database: TestDatabase;
  let service: ServiceProcess | undefined;
  before(async () => {
    database = await freshDatabase(engine);
  });
  after(async () => {
    if (service) await stopService(service);
    await database.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...process.env,
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.databaseUrl ?? '',
    LOG_LEVEL: 'warn',
    PUBLIC_URL: 'https://acds.example.com',
    ...extra,
  });
  const cli = async (...args: string[]) => succeeded(await runCli(args, env()));
  const post = (path: string, secret: string, event: object) => {
    const body = JSON.stringify(event);
    return fetch(`${service!.baseUrl}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-signature': genericSignatureHeader(secret, body) },
    });
  };
  const totalOf = async (url: string) => {
    const response = await fetch(`${service!.baseUrl}${url}`, { headers: { 'x-api-key': SERVICE_KEY } });
    assert.equal(response.status, 200);
    return ((await response.json()) as { totalEntries: number }).totalEntries;
  };

  test('carts connect prints the URL path last, list shows only its start, connecting again replaces it, disconnect removes it', async () => {
    service = await spawnService(database, { LOG_LEVEL: 'warn' });
    const secret = randomSecret(24);
    const connected = await cli('carts', 'connect', 'generic', '--secret', secret);
    const path = lastLine(connected.stdout);
    assert.match(path, /^\/hooks\/generic\/[A-Za-z0-9_-]{43}$/);
    assert.ok(connected.stdout.includes(`https://acds.example.com${path}`));
    assert.equal((await post(path, secret, genericEvent('cli-1', 'CLI-1'))).status, 200);

    const listed = (await cli('carts', 'list')).stdout;
    assert.match(listed, /^generic\t\/hooks\/generic\/[A-Za-z0-9_-]{6}…\tconnected /m);
    assert.ok(!listed.includes(path.split('/').at(-1)!), 'the whole token is never shown again');

    const replaced = lastLine((await cli('carts', 'connect', 'generic', '--secret', secret)).stdout);
    assert.notEqual(replaced, path);
    assert.equal((await post(path, secret, genericEvent('cli-2', 'CLI-2'))).status, 404);
    assert.equal((await post(replaced, secret, genericEvent('cli-3', 'CLI-3'))).status, 200);

    const unsigned = await runCli(['carts', 'connect', 'clickbank'], env());
    assert.notEqual(unsigned.code, 0);
    assert.match(unsigned.stderr, /--secret/);

    await cli('carts', 'disconnect', 'generic');
    assert.equal((await post(replaced, secret, genericEvent('cli-4', 'CLI-4'))).status, 404);
    assert.equal(await totalOf('/api/v1/conversions?receipt.between=CLI-,CLI-~'), 2);
  });

  test('kill -9 right after the replies loses nothing that was acknowledged', async () => {
    service ??= await spawnService(database, { LOG_LEVEL: 'warn' });
    const secret = randomSecret(24);
    const path = lastLine((await cli('carts', 'connect', 'generic', '--secret', secret)).stdout);
    const sent = 40;
    // Sent ten at a time, as a cart's retries and a busy shop overlap; the service is killed the moment the last reply is in.
    const acknowledged: string[] = [];
    for (let batch = 0; batch < sent / 10; batch++) {
      const receipts = Array.from({ length: 10 }, (_, index) => `CRASH-${batch * 10 + index}`);
      const replies = await Promise.all(receipts.map((receipt) => post(path, secret, genericEvent(`evt-${receipt}`, receipt))));
      for (const [index, reply] of replies.entries()) if (reply.status === 200) acknowledged.push(receipts[index]!);
    }
    await stopService(service, 'SIGKILL');
    assert.equal(acknowledged.length, sent);

    service = await spawnService(database, { LOG_LEVEL: 'warn' });
    assert.equal(await totalOf('/api/v1/conversions?receipt.between=CRASH-,CRASH-~'), sent);
    assert.equal(await totalOf('/api/v1/cart-events?receipt.between=CRASH-,CRASH-~'), sent);
  });
});
