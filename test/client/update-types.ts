/**
 * `npm run client:types`: writes the client's types (client/src/openapi.ts) from the service's
 * OpenAPI document, with openapi-typescript. test/client/types.test.ts fails when the file
 * differs from what the service's document makes now.
 */
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS from 'openapi-typescript';
import { startTestApp } from '../helpers/app.js';

export const TYPES_FILE = fileURLToPath(new URL('../../client/src/openapi.ts', import.meta.url));

const HEADER = "// Written by `npm run client:types` (test/client/update-types.ts) from the service's OpenAPI document; do not edit.\n\n";

/**
 * OpenAPI 3.0 has no null type: @fastify/swagger writes TypeBox's Null as a nullable object
 * whose one value is null, which openapi-typescript 6 cannot read. It is the type null.
 */
function nullOnly(schema: { nullable?: boolean; enum?: unknown[] }): string | undefined {
  return schema.nullable && schema.enum?.length === 1 && schema.enum[0] === null ? 'null' : undefined;
}

/** The client's types, as the service's document makes them now. */
export async function clientTypes(): Promise<string> {
  const ctx = await startTestApp('sqlite');
  try {
    const document = (await ctx.app.inject({ url: '/openapi.json' })).json();
    return `${HEADER}${await openapiTS(document, { transform: nullOnly })}`;
  } finally {
    await ctx.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  fs.writeFileSync(TYPES_FILE, await clientTypes());
  console.log(`wrote ${TYPES_FILE}`);
}
