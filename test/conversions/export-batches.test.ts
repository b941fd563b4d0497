import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXPORT_BATCH, type ExportSource, IDS_PER_QUESTION, exportChunks, lineIds } from '../../src/conversions/export.js';

/**
 * How an export reads its batches (src/conversions/export.ts), against a source made here: the
 * lines the database joins are checked against the ids asked, and the next batch is read while
 * the last is sent.
 */

const line = (id: number) => `{"id":${id},"receipt":"R-${id}"}\n`;

describe('lineIds: the id of each NDJSON line', () => {
  const cases: [string, string, number[]][] = [
    ['no lines', '', []],
    ['one line', line(7), [7]],
    ['several lines, ids of different lengths', line(9) + line(10) + line(123456789), [9, 10, 123456789]],
    ['a line holding text with "id" in it', '{"id":5,"note":"{\\"id\\":6,"}\n', [5]],
    ['the last line without its newline', `${line(1)}{"id":2,"x":1}`, [1, 2]],
  ];
  for (const [name, text, ids] of cases) {
    test(`${name}: as text and as bytes`, () => {
      assert.deepEqual(lineIds(text), ids);
      assert.deepEqual(lineIds(new TextEncoder().encode(text)), ids);
    });
  }
  test('bytes that are a view into a larger buffer are read from their own offset', () => {
    const whole = new TextEncoder().encode(`xxxx${line(3)}${line(4)}`);
    assert.deepEqual(lineIds(whole.subarray(4)), [3, 4]);
  });
});

/** A source of conversions 1..count, whose ndjsonByIds answers what `lines` makes of the ids asked. */
function sourceOf(count: number, lines: (ids: number[]) => string = (ids) => ids.map(line).join('')) {
  const calls: string[] = [];
  const source: ExportSource = {
    idsAfter: async (afterId, upTo, limit) => {
      calls.push(`ids after ${afterId}`);
      const ids = Array.from({ length: Math.max(0, Math.min(limit, count - afterId)) }, (_, index) => afterId + index + 1);
      return { ids, upTo: upTo ?? count };
    },
    entriesByIds: async () => {
      throw new Error('not asked for NDJSON');
    },
    ndjsonByIds: async (ids) => {
      calls.push(`lines of ${ids[0]}..${ids.at(-1)}`);
      return lines(ids);
    },
  };
  return { source, calls };
}

async function collect(chunks: AsyncGenerator<Uint8Array | string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
  return text;
}

describe('exportChunks', () => {
  test('every conversion once, in id order, across batches and questions to the index', async () => {
    for (const count of [0, 1, EXPORT_BATCH * 2 + 5, IDS_PER_QUESTION, IDS_PER_QUESTION * 2 + EXPORT_BATCH + 1]) {
      const { source, calls } = sourceOf(count);
      assert.deepEqual(
        lineIds(await collect(exportChunks(source, 'ndjson'))),
        Array.from({ length: count }, (_, index) => index + 1),
        `${count} conversions`,
      );
      const questions = calls.filter((call) => call.startsWith('ids'));
      // One more when the last answer was full: it cannot tell that nothing follows.
      assert.equal(questions.length, Math.floor(count / IDS_PER_QUESTION) + 1, `${count} conversions: ${questions.join(', ')}`);
    }
  });

  test('the next batch is read while the one before is with the consumer', async () => {
    const { source, calls } = sourceOf(EXPORT_BATCH * 3);
    const chunks = exportChunks(source, 'ndjson');
    await chunks.next();
    // Let the read ahead run: it needs no more from the consumer.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, ['ids after 0', `lines of 1..${EXPORT_BATCH}`, `lines of ${EXPORT_BATCH + 1}..${EXPORT_BATCH * 2}`]);
    await chunks.return(undefined);
  });

  test('nothing is yielded, not even the CSV header, before the first batch is read: a failure to start fails the first chunk', async () => {
    const failing: ExportSource = {
      ...sourceOf(10).source,
      idsAfter: async () => {
        throw new Error('the index did not answer in time');
      },
    };
    for (const format of ['ndjson', 'csv'] as const) await assert.rejects(exportChunks(failing, format).next(), /did not answer in time/, format);
  });

  test('a line missing from what the database joined fails the export instead of sending less', async () => {
    const { source } = sourceOf(10, (ids) =>
      ids
        .filter((id) => id !== 4)
        .map(line)
        .join(''),
    );
    await assert.rejects(collect(exportChunks(source, 'ndjson')), /listed 10 conversions, the database holds 9/);
  });

  test('lines out of order fail the export', async () => {
    const { source } = sourceOf(3, () => line(1) + line(3) + line(2));
    await assert.rejects(collect(exportChunks(source, 'ndjson')), /read conversion 3 where the export expected 2/);
  });

  test('a consumer that stops early leaves no failure behind from the batch read ahead', async () => {
    let failures = 0;
    const count = (error: unknown) => {
      if (error instanceof Error) failures += 1;
    };
    process.on('unhandledRejection', count);
    try {
      const { source } = sourceOf(EXPORT_BATCH * 3, (ids) => {
        if (ids[0]! > EXPORT_BATCH) throw new Error('the database went away');
        return ids.map(line).join('');
      });
      const chunks = exportChunks(source, 'ndjson');
      await chunks.next();
      await chunks.return(undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(failures, 0);
    } finally {
      process.off('unhandledRejection', count);
    }
  });
});
