import { serviceUrl } from './session';

/** A filterable column of conversions and the modifiers it takes, as the service's OpenAPI document declares them. */
export interface FilterColumn {
  name: string;
  modifiers: string[];
  /** The input that suits a value: a number, a date, one of a few values, or text. */
  kind: 'number' | 'date' | 'choice' | 'text';
  choices: string[];
}

interface Parameter {
  name: string;
  in: string;
  schema: { type?: string; enum?: string[]; description?: string; items?: { type?: string } };
  description?: string;
}

/**
 * Reads the filters of the conversions list from /openapi.json, the one place the service
 * declares them, so that the console offers exactly the columns and modifiers the API takes.
 */
export async function conversionFilters(): Promise<FilterColumn[]> {
  const response = await fetch(new URL('openapi.json', serviceUrl()));
  if (!response.ok) throw new Error(`the service's API document could not be read (${response.status})`);
  const document = await response.json();
  const parameters: Parameter[] = document.paths['/api/v1/conversions'].get.parameters;
  const columns = new Map<string, FilterColumn>();
  for (const parameter of parameters) {
    if (parameter.in !== 'query' || parameter.name === 'page') continue;
    const [name, modifier = 'eq'] = parameter.name.split('.') as [string, string?];
    let column = columns.get(name);
    if (!column) {
      column = { name, modifiers: [], kind: kindOf(parameter), choices: parameter.schema.enum ?? [] };
      columns.set(name, column);
    }
    column.modifiers.push(modifier);
  }
  return [...columns.values()];
}

function kindOf(parameter: Parameter): FilterColumn['kind'] {
  const { type, enum: choices } = parameter.schema;
  if (type === 'integer' || type === 'number') return 'number';
  if (choices) return 'choice';
  if (/RFC 3339/.test(parameter.description ?? parameter.schema.description ?? '')) return 'date';
  return 'text';
}
