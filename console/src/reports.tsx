import type { ConversionFilters, ConversionSummary } from '@acds/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { type QueryProps, QueryEditor } from './conversions';
import { dateIn, datesBetween, PRESETS, type Preset, presetRange, startOfDay, addDays } from './dates';
import { filtersOf } from './query';
import { messageOf } from './session';

const STACKS = [
  ['utm_source', 'Source'],
  ['cart_integration', 'Cart'],
  ['country', 'Country'],
  ['page_version', 'Page version'],
] as const;
type Stack = (typeof STACKS)[number][0];
type Measure = 'amount' | 'conversions';

/** Series beyond these many values are summed as "other", so that the chart stays readable. */
const MAX_SERIES = 8;
const COLOURS = ['#2563eb', '#16a34a', '#ea580c', '#9333ea', '#0891b2', '#dc2626', '#ca8a04', '#db2777', '#64748b'];

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
const keyText = (value: unknown) => (value === null || value === undefined ? '(none)' : String(value));

export function ReportsTab({ client, query, onQuery }: QueryProps) {
  const [timeZone, setTimeZone] = useState(browserZone);
  const [range, setRange] = useState(() => presetRange('last 30 days', dateIn(new Date(), browserZone())));
  const [stack, setStack] = useState<Stack>('utm_source');
  const [measure, setMeasure] = useState<Measure>('amount');
  const [byDay, setByDay] = useState<ConversionSummary>();
  const [byValue, setByValue] = useState<ConversionSummary>();
  const [problem, setProblem] = useState('');
  const [from, to] = range;

  useEffect(() => {
    let current = true;
    setProblem('');
    const filters = {
      ...filtersOf(query),
      'created_at.gte': startOfDay(from, timeZone).toISOString(),
      'created_at.lt': startOfDay(addDays(to, 1), timeZone).toISOString(),
    } as ConversionFilters;
    Promise.all([client.conversions.summary(filters, { group_by: `day,${stack}`, tz: timeZone }), client.conversions.summary(filters, { group_by: stack })])
      .then(([days, values]) => {
        if (!current) return;
        setByDay(days);
        setByValue(values);
      })
      .catch((error) => current && setProblem(messageOf(error)));
    return () => {
      current = false;
    };
  }, [client, query, from, to, timeZone, stack]);

  const ranked = [...(byValue?.groups ?? [])].sort((a, b) => b.amount - a.amount || b.conversions - a.conversions);
  const label = STACKS.find(([column]) => column === stack)![1];
  return (
    <section aria-label="Reports">
      <QueryEditor client={client} query={query} onQuery={onQuery} />
      <div class="toolbar">
        <label>
          From
          <input type="date" value={from} onChange={(event) => setRange([event.currentTarget.value, to])} />
        </label>
        <label>
          To
          <input type="date" value={to} onChange={(event) => setRange([from, event.currentTarget.value])} />
        </label>
        <fieldset class="presets">
          <legend>Presets</legend>
          {PRESETS.map((preset: Preset) => (
            <button key={preset} type="button" class="quiet" onClick={() => setRange(presetRange(preset, dateIn(new Date(), timeZone)))}>
              {preset[0]!.toUpperCase() + preset.slice(1)}
            </button>
          ))}
        </fieldset>
        <label>
          Time zone
          <select value={timeZone} onChange={(event) => setTimeZone(event.currentTarget.value)}>
            {[...new Set([browserZone(), 'UTC', ...Intl.supportedValuesOf('timeZone')])].map((zone) => (
              <option key={zone}>{zone}</option>
            ))}
          </select>
        </label>
        <label>
          Stack by
          <select value={stack} onChange={(event) => setStack(event.currentTarget.value as Stack)}>
            {STACKS.map(([column, name]) => (
              <option key={column} value={column}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Show
          <select value={measure} onChange={(event) => setMeasure(event.currentTarget.value as Measure)}>
            <option value="amount">Revenue</option>
            <option value="conversions">Conversions</option>
          </select>
        </label>
      </div>
      {problem && (
        <p role="alert" class="problem">
          {problem}
        </p>
      )}
      {byDay && (
        <StackedChart summary={byDay} stack={stack} measure={measure} dates={datesBetween(from, to)} order={ranked.map((group) => keyText(group.key[stack]))} />
      )}
      {byValue && (
        <table aria-label={`Top ${label.toLowerCase()} values`}>
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col">Revenue</th>
              <th scope="col">Conversions</th>
              <th scope="col">Buyers</th>
            </tr>
          </thead>
          <tbody>
            {ranked.map((group) => (
              <tr key={keyText(group.key[stack])}>
                <th scope="row">{keyText(group.key[stack])}</th>
                <td>{money(group.amount)}</td>
                <td>{group.conversions}</td>
                <td>{group.buyers}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Total</th>
              <td>{money(byValue.totals.amount)}</td>
              <td>{byValue.totals.conversions}</td>
              <td>{byValue.totals.buyers}</td>
            </tr>
          </tfoot>
        </table>
      )}
    </section>
  );
}

const money = (amount: number) => amount.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

interface ChartProps {
  summary: ConversionSummary;
  stack: Stack;
  measure: Measure;
  dates: string[];
  /** The stack's values, largest first. */
  order: string[];
}

/**
 * The measure per day, stacked by the stack's values (the largest first, the rest as "other"),
 * drawn with uPlot: each series is the running sum of those below it, painted from the top down.
 */
function StackedChart({ summary, stack, measure, dates, order }: ChartProps) {
  const frame = useRef<HTMLDivElement>(null);
  const names = order.length > MAX_SERIES ? [...order.slice(0, MAX_SERIES - 1), 'other'] : order;
  const seriesOf = (value: string) => (names.includes(value) ? value : 'other');
  const perDay = new Map(dates.map((date) => [date, new Map(names.map((name) => [name, 0]))]));
  for (const group of summary.groups) {
    const day = perDay.get(String(group.key.day));
    const name = seriesOf(keyText(group.key[stack]));
    if (day) day.set(name, (day.get(name) ?? 0) + group[measure]);
  }
  useEffect(() => {
    if (!frame.current) return;
    const x = dates.map((date) => Date.parse(`${date}T00:00:00Z`) / 1000);
    let below = dates.map(() => 0);
    const stacked = names.map((name) => {
      below = dates.map((date, index) => below[index]! + (perDay.get(date)?.get(name) ?? 0));
      return below;
    });
    const chart = new uPlot(
      {
        width: frame.current.clientWidth,
        height: 280,
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        legend: { live: false },
        scales: { x: { time: true } },
        series: [
          {},
          ...names
            .map((name, index) => ({
              label: name,
              stroke: COLOURS[index % COLOURS.length],
              fill: `${COLOURS[index % COLOURS.length]}cc`,
              points: { show: false },
            }))
            .reverse(),
        ],
        axes: [{}, { size: 60 }],
      },
      [x, ...stacked.reverse()],
      frame.current,
    );
    return () => chart.destroy();
  }, [summary, measure, dates.join(), names.join()]);
  return (
    <figure class="chart">
      <figcaption>
        {measure === 'amount' ? 'Revenue' : 'Conversions'} per day by {stack}
      </figcaption>
      <div ref={frame} role="img" aria-label={`${measure === 'amount' ? 'Revenue' : 'Conversions'} per day, stacked by ${stack}`} />
      <details>
        <summary>Chart data</summary>
        <table aria-label="Chart data">
          <thead>
            <tr>
              <th scope="col">Day</th>
              {names.map((name) => (
                <th key={name} scope="col">
                  {name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {dates
              .filter((date) => [...(perDay.get(date)?.values() ?? [])].some((value) => value !== 0))
              .map((date) => (
                <tr key={date}>
                  <th scope="row">{date}</th>
                  {names.map((name) => (
                    <td key={name}>{measure === 'amount' ? money(perDay.get(date)?.get(name) ?? 0) : perDay.get(date)?.get(name)}</td>
                  ))}
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
