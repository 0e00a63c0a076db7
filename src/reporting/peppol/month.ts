import { GatewayError } from '../../core/gateway-error';
import type { ReportingMonth } from './types';

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** The calendar month `YYYY-MM` as a UTC period. */
export function reportingMonth(month: string): ReportingMonth {
  const m = /^([0-9]{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) throw new GatewayError('BAD_REQUEST', `a reporting month is written YYYY-MM, not "${month.slice(0, 40)}"`);
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  const start = new Date(Date.UTC(year, index, 1));
  const end = new Date(Date.UTC(year, index + 1, 1));
  const last = new Date(end.getTime() - 86_400_000);
  return {
    month,
    start,
    end,
    startDate: `${m[1]}-${m[2]}-01`,
    endDate: `${pad(last.getUTCFullYear(), 4)}-${pad(last.getUTCMonth() + 1)}-${pad(last.getUTCDate())}`,
  };
}

/** The month (UTC) an instant falls in, `YYYY-MM`. */
export function monthOf(at: Date): string {
  return `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}`;
}

/** The month before the one `at` falls in (UTC): the month reported on in the first half of `at`'s month. */
export function previousMonth(at: Date): string {
  return monthOf(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1)));
}
