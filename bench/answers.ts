/**
 * Checking the service's list answers against the data rather than trusting them: conversions
 * against the generated NDJSON file itself (streamed once for any number of answers; rows are
 * imported in file order, so the file order is the id order).
 */
import fs from 'node:fs';
import readline from 'node:readline';
import type { ConversionFacts } from './scenarios.js';

export const PAGE_SIZE = 100;

/** What is checked of a list answer. */
export interface ListAnswer {
  entries: { id: number; receipt?: string | undefined }[];
  totalEntries: number;
  page: number;
  totalPages: number;
}

/** Problems of one answer, given the data's total and the page's expected entries (receipts or ids). */
export function compareAnswer(
  label: string,
  page: number,
  answer: ListAnswer,
  total: number,
  expected: (string | number)[],
  actual: (string | number | undefined)[],
): string[] {
  const problems: string[] = [];
  const ids = answer.entries.map((entry) => entry.id);
  if (answer.totalEntries !== total) problems.push(`${label}: totalEntries ${answer.totalEntries}, the data has ${total}`);
  if (answer.page !== page || answer.totalPages !== Math.ceil(total / PAGE_SIZE))
    problems.push(`${label}: page ${answer.page} of ${answer.totalPages}, expected ${page} of ${Math.ceil(total / PAGE_SIZE)}`);
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    problems.push(
      `${label}: entries ${JSON.stringify(actual.slice(0, 3))}..., expected ${JSON.stringify(expected.slice(0, 3))}... (${actual.length} vs ${expected.length})`,
    );
  if (ids.some((id, index) => index > 0 && id <= ids[index - 1]!)) problems.push(`${label}: ids not ascending`);
  return problems;
}

export interface ConversionProbe {
  /** Names the answer in a problem, such as "S3 /api/v1/conversions?...". */
  label: string;
  page: number;
  answer: ListAnswer;
  matches: (row: ConversionFacts) => boolean;
}

/** Checks each answer's total and page of receipts against the rows of `ndjson` it matches; returns the problems. */
export async function checkConversionAnswers(probes: ConversionProbe[], ndjson: string): Promise<string[]> {
  const counts = probes.map(() => ({ total: 0, receipts: [] as string[] }));
  for await (const line of readline.createInterface({ input: fs.createReadStream(ndjson), crlfDelay: Infinity })) {
    const row = JSON.parse(line) as ConversionFacts;
    for (let index = 0; index < probes.length; index++) {
      const probe = probes[index]!;
      if (!probe.matches(row)) continue;
      const count = counts[index]!;
      if (count.total >= (probe.page - 1) * PAGE_SIZE && count.total < probe.page * PAGE_SIZE) count.receipts.push(row.receipt);
      count.total += 1;
    }
  }
  return probes.flatMap((probe, index) => {
    const { total, receipts } = counts[index]!;
    return compareAnswer(
      probe.label,
      probe.page,
      probe.answer,
      total,
      receipts,
      probe.answer.entries.map((entry) => entry.receipt),
    );
  });
}
