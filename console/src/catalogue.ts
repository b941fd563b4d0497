import { serviceUrl } from './session';

/** A filterable column of conversions and the modifiers it takes, as the service's OpenAPI document declares them. */
export interface FilterColumn {
  name: string;
  modifiers: string[];
  /** A value to show as the input's placeholder: the document's example, or a date's form. */
  hint: string;
}

interface Parameter {
  name: string;
  in: string;
  example?: unknown;
  description?: string;
}

let read: Promise<FilterColumn[]> | undefined;

/**
 * The filters of the conversions list, read once from /openapi.json, the one place the service
 * declares them, so that the console offers exactly the columns and modifiers the API takes.
 */
export function conversionFilters(): Promise<FilterColumn[]> {
  read ??= readFilters().catch((error: unknown) => {
    read = undefined;
    throw error;
  });
  return read;
}

async function readFilters(): Promise<FilterColumn[]> {
  const response = await fetch(new URL('openapi.json', serviceUrl()));
  if (!response.ok) throw new Error(`the service's API document could not be read (${response.status}), so the filter builder has no columns`);
  const document = await response.json();
  const parameters: Parameter[] = document.paths['/api/v1/conversions'].get.parameters;
  const columns = new Map<string, FilterColumn>();
  for (const parameter of parameters) {
    if (parameter.in !== 'query' || parameter.name === 'page') continue;
    const [name, modifier = 'eq'] = parameter.name.split('.') as [string, string?];
    let column = columns.get(name);
    if (!column) {
      const isDate = /RFC 3339/.test(parameter.description ?? '');
      column = { name, modifiers: [], hint: isDate ? '2026-11-22' : parameter.example === undefined ? '' : String(parameter.example) };
      columns.set(name, column);
    }
    column.modifiers.push(modifier);
  }
  return [...columns.values()];
}
