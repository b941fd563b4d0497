import type { ConversionFilters, ConversionSummary } from '@acds/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { Problem, useAnswer } from './answer';
import { type QueryProps, QueryEditor } from './conversions';
import { dateIn, datesBetween, isReportDate, MAX_REPORT_DAYS, PRESETS, presetRange } from './dates';
import { filtersWithin } from './query';

const STACKS = [
  ['utm_source', 'Source'],
  ['cart_integration', 'Cart'],
  ['country', 'Country'],
  ['page_version', 'Page version'],
] as const;
type Stack = (typeof STACKS)[number][0];
type Measure = 'amount' | 'conversions';
const MEASURE_LABELS: Record<Measure, string> = { amount: 'Revenue', conversions: 'Conversions' };

/** Series beyond these many values are summed as one, so that the chart stays readable. */
const MAX_SERIES = 8;
const COLOURS = ['#2563eb', '#16a34a', '#ea580c', '#9333ea', '#0891b2', '#dc2626', '#ca8a04', '#db2777', '#64748b'];

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
const TIME_ZONES = [...new Set([browserZone(), 'UTC', ...Intl.supportedValuesOf('timeZone')])];
const keyText = (value: unknown) => (value === null || value === undefined ? '(none)' : String(value));
// A chart's series are kept by keys no stored value can take (stored text holds no NUL), so that
// a source named "other" or "(none)" is a series of its own, not summed with the bucket of that name.
const NONE_SERIES = '\u0000none';
const OTHER_SERIES = '\u0000other';
const seriesOf = (value: unknown) => (value === null || value === undefined ? NONE_SERIES : String(value));
const seriesLabel = (series: string) => (series === OTHER_SERIES ? '(the rest)' : series === NONE_SERIES ? '(none)' : series);
const money = (amount: number) => amount.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function ReportsTab({ client, query, onQuery }: QueryProps) {
  const [timeZone, setTimeZone] = useState(browserZone);
  const [range, setRange] = useState(() => presetRange('last 30 days', dateIn(new Date(), browserZone())));
  const [stack, setStack] = useState<Stack>('utm_source');
  const [measure, setMeasure] = useState<Measure>('amount');
  const [from, to] = range;
  const answer = useAnswer(
    async (signal) => {
      if (from > to) throw new Error('the range must start on or before the day it ends');
      if (datesBetween(from, to).at(-1) !== to) throw new Error(`the range must be at most ${MAX_REPORT_DAYS.toLocaleString()} days long`);
      const filters = filtersWithin(query, from, to, timeZone) as ConversionFilters;
      const [byDay, byValue] = await Promise.all([
        client.conversions.summary(filters, { group_by: `day,${stack}`, tz: timeZone, signal }),
        client.conversions.summary(filters, { group_by: stack, signal }),
      ]);
      return { byDay, byValue };
    },
    [client, query, from, to, timeZone, stack],
  );
  // Half-typed dates (a year being typed reads 0002-...) are not asked about.
  const changeRange = (next: [string, string]) => next.every(isReportDate) && setRange(next);

  const label = STACKS.find(([column]) => column === stack)![1];
  const ranked = [...(answer.value?.byValue.groups ?? [])].sort((a, b) => b[measure] - a[measure] || b.conversions - a.conversions);
  return (
    <section aria-label="Reports">
      <QueryEditor query={query} onQuery={onQuery} />
      <div class="toolbar">
        <label>
          From
          <input type="date" value={from} onChange={(event) => changeRange([event.currentTarget.value, to])} />
        </label>
        <label>
          To
          <input type="date" value={to} onChange={(event) => changeRange([from, event.currentTarget.value])} />
        </label>
        <fieldset class="presets">
          <legend>Presets</legend>
          {PRESETS.map((preset) => (
            <button key={preset} type="button" class="quiet" onClick={() => setRange(presetRange(preset, dateIn(new Date(), timeZone)))}>
              {preset[0]!.toUpperCase() + preset.slice(1)}
            </button>
          ))}
        </fieldset>
        <label>
          Time zone
          <select value={timeZone} onChange={(event) => setTimeZone(event.currentTarget.value)}>
            {TIME_ZONES.map((zone) => (
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
            {Object.entries(MEASURE_LABELS).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Problem text={answer.problem} />
      {answer.value && (
        <StackedChart
          summary={answer.value.byDay}
          stack={stack}
          label={label}
          measure={measure}
          dates={datesBetween(from, to)}
          order={ranked.map((group) => seriesOf(group.key[stack]))}
        />
      )}
      {answer.value && (
        <div class="table-frame">
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
                <tr key={seriesOf(group.key[stack])}>
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
                <td>{money(answer.value.byValue.totals.amount)}</td>
                <td>{answer.value.byValue.totals.conversions}</td>
                <td>{answer.value.byValue.totals.buyers}</td>
              </tr>
            </tfoot>
          </table>
        </div>
      )}
    </section>
  );
}

interface ChartProps {
  summary: ConversionSummary;
  stack: Stack;
  /** The stack's name for people. */
  label: string;
  measure: Measure;
  dates: string[];
  /** The stack's values, largest first. */
  order: string[];
}

/**
 * The measure per day, stacked by the stack's values (the largest first, the rest summed as one),
 * drawn with uPlot: each series is the running sum of those below it, painted from the top down
 * in opaque colours, so that each band shows its own value; the legend is the page's own, in the
 * tables' order.
 */
function StackedChart({ summary, stack, label, measure, dates, order }: ChartProps) {
  const frame = useRef<HTMLDivElement>(null);
  const names = order.length > MAX_SERIES ? [...order.slice(0, MAX_SERIES - 1), OTHER_SERIES] : order;
  const perDay = new Map(dates.map((date) => [date, new Map(names.map((name) => [name, 0]))]));
  for (const group of summary.groups) {
    const day = perDay.get(String(group.key.day));
    const value = seriesOf(group.key[stack]);
    const name = names.includes(value) ? value : OTHER_SERIES;
    day?.set(name, (day.get(name) ?? 0) + group[measure]);
  }
  const colourOf = (index: number) => COLOURS[index % COLOURS.length]!;
  const title = `${MEASURE_LABELS[measure]} per day by ${label.toLowerCase()}`;
  const scheme = useColourScheme();
  useEffect(() => {
    if (!frame.current) return;
    const style = getComputedStyle(document.documentElement);
    const axis = {
      stroke: style.getPropertyValue('--text'),
      grid: { stroke: style.getPropertyValue('--line') },
      ticks: { stroke: style.getPropertyValue('--line') },
    };
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
        legend: { show: false },
        scales: { x: { time: true } },
        series: [
          {},
          ...names.map((name, index) => ({ label: seriesLabel(name), stroke: colourOf(index), fill: colourOf(index), points: { show: false } })).reverse(),
        ],
        axes: [axis, { ...axis, size: 60 }],
      },
      [dates.map((date) => Date.parse(`${date}T00:00:00Z`) / 1000), ...stacked.reverse()],
      frame.current,
    );
    // The chart is drawn at a width in pixels: follow the frame as the window or the phone turns.
    const resized = new ResizeObserver(([entry]) => {
      if (entry && Math.round(entry.contentRect.width) !== chart.width) chart.setSize({ width: entry.contentRect.width, height: 280 });
    });
    resized.observe(frame.current);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [summary, measure, dates.join(), names.join(), scheme]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={frame} role="img" aria-label={title} />
      <ul class="legend" aria-label="Legend">
        {names.map((name, index) => (
          <li key={name}>
            <span class="swatch" style={{ background: colourOf(index) }} />
            {seriesLabel(name)}
          </li>
        ))}
      </ul>
      <details>
        <summary>Chart data</summary>
        <div class="table-frame">
          <table aria-label="Chart data">
            <thead>
              <tr>
                <th scope="col">Day</th>
                {names.map((name) => (
                  <th key={name} scope="col">
                    {seriesLabel(name)}
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
        </div>
      </details>
    </figure>
  );
}

/** 'dark' or 'light' as the system says now, so that what reads the theme's colours draws again when it changes. */
function useColourScheme() {
  const query = matchMedia('(prefers-color-scheme: dark)');
  const [scheme, setScheme] = useState(query.matches ? 'dark' : 'light');
  useEffect(() => {
    const changed = () => setScheme(query.matches ? 'dark' : 'light');
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return scheme;
}
