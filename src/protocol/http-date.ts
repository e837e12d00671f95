/**
 * HTTP-date (RFC 9110 section 5.6.7): the preferred IMF-fixdate and, since recipients MUST accept
 * them, the obsolete RFC 850 and asctime forms. Nothing else is a date: `Date.parse` would take
 * "0" as the year 2000 and "2030" as a future instant, and an asctime date in local time, so a
 * field value such as `Expires: 0` would pass for a real date.
 */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** Sun, 06 Nov 1994 08:49:37 GMT */
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** Sunday, 06-Nov-94 08:49:37 GMT */
const RFC850_DATE = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** Sun Nov  6 08:49:37 1994 */
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** Milliseconds since the epoch for these UTC fields, or null when they name no real instant (31 Feb, 25:00). */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number | null {
  if (month < 0 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  // Second 60 is allowed by the grammar (a leap second): it is the instant after second 59.
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month || check.getUTCDate() !== day) return null;
  return second === 60 ? ms + 1000 : ms;
}

/**
 * The instant an HTTP-date names, in ms since the epoch, or null when the text is not one.
 * `nowMs` places a two-digit RFC 850 year: one that would be more than 50 years in the future is
 * the most recent past year with those digits (RFC 9110 section 5.6.7).
 */
export function parseHttpDate(text: string, nowMs: number): number | null {
  const value = text.trim();
  let m = IMF_FIXDATE.exec(value);
  if (m !== null) return utc(Number(m[3]), MONTHS.indexOf(m[2] as string), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = RFC850_DATE.exec(value);
  if (m !== null) {
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, MONTHS.indexOf(m[2] as string), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  m = ASCTIME_DATE.exec(value);
  if (m !== null) return utc(Number(m[6]), MONTHS.indexOf(m[1] as string), Number((m[2] as string).trim()), Number(m[3]), Number(m[4]), Number(m[5]));
  return null;
}
