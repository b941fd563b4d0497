/** Dates as a seller reads them: days in a chosen time zone, turned into the instants the API filters by. */

/** The date (YYYY-MM-DD) an instant falls on in `timeZone`, built from its parts (no locale's pattern). */
export function dateIn(instant: Date | number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  const part = (type: string) => parts.find((each) => each.type === type)?.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** A date a report can ask for: YYYY-MM-DD from 1970 on. */
export function isReportDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && text >= '1970-01-01' && !Number.isNaN(Date.parse(`${text}T00:00:00Z`));
}

/** How far `timeZone`'s clock is ahead of UTC at `instant`, in milliseconds. */
function offsetMs(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(instant);
  const part = (type: string) => Number(parts.find((each) => each.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second')) - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a day starts in `timeZone`: its first second whose local date is the day. Where
 * the clock jumps at midnight (Santiago in September) the day starts at 01:00, an hour after
 * midnight's offset would say; both offsets around the change are tried.
 */
export function startOfDay(date: string, timeZone: string): Date {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(year, month - 1, day);
  const first = wall - offsetMs(wall, timeZone);
  const second = wall - offsetMs(first, timeZone);
  const candidates = [Math.min(first, second), Math.max(first, second)];
  return new Date(candidates.find((instant) => dateIn(instant, timeZone) === date) ?? second);
}

export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

/** The longest range a report draws, in days: ten years. */
export const MAX_REPORT_DAYS = 3_660;

/** Every date from `from` to `to`, both included; at most MAX_REPORT_DAYS of them. */
export function datesBetween(from: string, to: string): string[] {
  const dates: string[] = [];
  for (let date = from; date <= to && dates.length < MAX_REPORT_DAYS; date = addDays(date, 1)) dates.push(date);
  return dates;
}

export type Preset = 'last 7 days' | 'last 30 days' | 'last 90 days' | 'this month' | 'last month';
export const PRESETS: Preset[] = ['last 7 days', 'last 30 days', 'last 90 days', 'this month', 'last month'];

/** The first and last dates of a preset, seen from `today`. */
export function presetRange(preset: Preset, today: string): [string, string] {
  const monthStart = `${today.slice(0, 8)}01`;
  switch (preset) {
    case 'last 7 days':
      return [addDays(today, -6), today];
    case 'last 30 days':
      return [addDays(today, -29), today];
    case 'last 90 days':
      return [addDays(today, -89), today];
    case 'this month':
      return [monthStart, today];
    case 'last month': {
      const lastMonthEnd = addDays(monthStart, -1);
      return [`${lastMonthEnd.slice(0, 8)}01`, lastMonthEnd];
    }
  }
}
