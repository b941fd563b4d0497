import type { AcdsClient, ConversionEntry, ConversionFilters } from '@acds/client';
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf, Problem, useAnswer } from './answer';
import { conversionFilters, type FilterColumn } from './catalogue';
import { clausesOf, filtersOf, queryOf, withClause } from './query';

const DEFAULT_COLUMNS = ['id', 'created_at', 'cart_integration', 'receipt', 'amount', 'currency', 'country', 'utm_source'];

/** "1 conversion", "1,234 conversions". */
export const counted = (count: number, noun: string) => `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`;

export interface QueryProps {
  client: AcdsClient;
  query: string;
  onQuery: (query: string) => void;
}

export function ConversionsTab({ client, query, onQuery }: QueryProps) {
  const [page, setPage] = useState(1);
  const [columns, setColumns] = useState(DEFAULT_COLUMNS);
  const [opened, setOpened] = useState<ConversionEntry>();
  const [exportProblem, setExportProblem] = useState<string>();
  const [exporting, setExporting] = useState(false);
  const entryDialog = useRef<HTMLDialogElement>(null);
  const answer = useAnswer((signal) => client.conversions.page(filtersOf(query) as ConversionFilters, page, { signal }), [client, query, page]);
  const found = answer.value;

  const exportCsv = async () => {
    setExporting(true);
    setExportProblem(undefined);
    try {
      const chunks: string[] = [];
      for await (const chunk of client.conversions.export(filtersOf(query) as ConversionFilters, { format: 'csv' })) chunks.push(chunk);
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob(chunks, { type: 'text/csv' }));
      link.download = 'conversions.csv';
      link.click();
      // After the click has started the download, which reads the URL.
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (error) {
      setExportProblem(messageOf(error));
    } finally {
      setExporting(false);
    }
  };

  const allColumns = found?.entries[0] ? Object.keys(found.entries[0]) : DEFAULT_COLUMNS;
  return (
    <section aria-label="Conversions">
      <QueryEditor
        query={query}
        onQuery={(next) => {
          setPage(1);
          onQuery(next);
        }}
      />
      <div class="toolbar">
        <output aria-label="Total">{found ? counted(found.totalEntries, 'conversion') : answer.loading ? 'Counting…' : ''}</output>
        <details class="columns">
          <summary>Columns</summary>
          {allColumns.map((name) => (
            <label key={name}>
              <input
                type="checkbox"
                checked={columns.includes(name)}
                onChange={(event) =>
                  setColumns(
                    event.currentTarget.checked
                      ? allColumns.filter((each) => each === name || columns.includes(each))
                      : columns.filter((each) => each !== name),
                  )
                }
              />
              {name}
            </label>
          ))}
        </details>
        <button type="button" onClick={exportCsv} disabled={exporting}>
          Export CSV
        </button>
      </div>
      <Problem text={answer.problem ?? exportProblem} />
      <div class="table-frame">
        <table aria-label="Conversions on this page">
          <thead>
            <tr>
              {columns.map((name) => (
                <th key={name} scope="col">
                  {name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {found?.entries.map((entry) => (
              <tr key={entry.id}>
                {columns.map((name, index) => (
                  <td key={name}>
                    {/* The first column opens the whole entry. */}
                    {index === 0 ? (
                      <button
                        type="button"
                        class="link"
                        aria-label={`Open conversion ${entry.id}`}
                        onClick={() => {
                          setOpened(entry);
                          entryDialog.current?.showModal();
                        }}
                      >
                        {cell(entry, name)}
                      </button>
                    ) : (
                      cell(entry, name)
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {found && found.totalPages > 1 && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {found.page} of {found.totalPages}
          </span>
          <button type="button" disabled={page >= found.totalPages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
      <dialog ref={entryDialog} aria-label={opened ? `Conversion ${opened.id}` : 'Conversion'}>
        {opened && (
          <>
            <h2>Conversion {opened.id}</h2>
            <dl class="entry">
              {Object.keys(opened).map((name) => (
                <Fragment key={name}>
                  <dt>{name}</dt>
                  <dd>{cell(opened, name) || 'null'}</dd>
                </Fragment>
              ))}
            </dl>
          </>
        )}
        <form method="dialog">
          <button type="submit">Close</button>
        </form>
      </dialog>
    </section>
  );
}

function cell(entry: ConversionEntry, name: string): string {
  const value = (entry as Record<string, unknown>)[name];
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * The filter builder: a column, a modifier and a value become one clause of the query (taking
 * the place of one of the same name), which is shown as text and can be edited as text; the
 * tabs follow the text once applied.
 */
export function QueryEditor({ query, onQuery }: Omit<QueryProps, 'client'>) {
  const [text, setText] = useState(query);
  const [filters, setFilters] = useState<FilterColumn[]>([]);
  const [filtersProblem, setFiltersProblem] = useState<string>();
  const [column, setColumn] = useState('utm_source');
  const [modifier, setModifier] = useState('eq');
  const [value, setValue] = useState('');
  // The text follows the query when a filter is added or removed; not on the first render,
  // which would undo what a person typed before the effect ran.
  const mounted = useRef(false);
  useEffect(() => {
    if (mounted.current) setText(query);
    mounted.current = true;
  }, [query]);
  useEffect(() => {
    conversionFilters().then(setFilters, (error: unknown) => setFiltersProblem(messageOf(error)));
  }, []);
  const chosen = filters.find((each) => each.name === column);
  const clauses = clausesOf(query);
  return (
    <div class="query">
      <Problem text={filtersProblem} />
      <form
        class="builder"
        aria-label="Add a filter"
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() === '') return;
          onQuery(queryOf(withClause(clauses, { name: modifier === 'eq' ? column : `${column}.${modifier}`, value: value.trim() })));
          setValue('');
        }}
      >
        <label>
          Column
          <select
            value={column}
            onChange={(event) => {
              setColumn(event.currentTarget.value);
              setModifier('eq');
            }}
          >
            {filters.map((each) => (
              <option key={each.name}>{each.name}</option>
            ))}
          </select>
        </label>
        <label>
          Modifier
          <select value={modifier} onChange={(event) => setModifier(event.currentTarget.value)}>
            {(chosen?.modifiers ?? ['eq']).map((each) => (
              <option key={each}>{each}</option>
            ))}
          </select>
        </label>
        <label>
          Value
          <input
            value={value}
            placeholder={modifier === 'in' ? 'a,b,c' : modifier === 'between' ? 'from,to' : chosen?.hint}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Add filter</button>
      </form>
      <form
        class="query-text"
        onSubmit={(event) => {
          event.preventDefault();
          onQuery(text.trim().replace(/^\?/, ''));
        }}
      >
        <label>
          Query
          <input value={text} placeholder="utm_source=facebook&amount.gte=50" spellcheck={false} onInput={(event) => setText(event.currentTarget.value)} />
        </label>
        <button type="submit">Apply</button>
      </form>
      {clauses.length > 0 && (
        <ul class="clauses" aria-label="Filters">
          {clauses.map((clause, index) => (
            <li key={`${clause.name}-${index}`}>
              <code>
                {clause.name}={clause.value}
              </code>
              <button
                type="button"
                class="quiet"
                aria-label={`Remove ${clause.name}`}
                onClick={() => onQuery(queryOf(clauses.filter((_, at) => at !== index)))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
