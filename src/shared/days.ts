/**
 * UTC calendar days as the usage counters, the request log's partitions and their purges name them
 * (`YYYY-MM-DD`). Pure functions; the memos below only save re-printing the same days (GET
 * /v1/partner/me asks on every request) and hold nothing a process depends on.
 */

export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC day number (days since the epoch), memoised for the current day. */
let memoDayNumber = Number.NaN;
let memoDay = '';
export function dayOf(dayNumber: number): string {
  if (dayNumber === memoDayNumber) return memoDay;
  const day = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
  memoDayNumber = dayNumber;
  memoDay = day;
  return day;
}

/** The `count` UTC days ending with the day of `nowMs`, oldest first (memoised: /me asks on every request). */
const dayLists = new Map<string, readonly string[]>();
export function daysEnding(nowMs: number, count: number): readonly string[] {
  const today = Math.floor(nowMs / DAY_MS);
  const id = `${today}:${count}`;
  let days = dayLists.get(id);
  if (!days) {
    const list: string[] = new Array(count);
    for (let i = 0; i < count; i++) list[i] = new Date((today - (count - 1 - i)) * DAY_MS).toISOString().slice(0, 10);
    if (dayLists.size >= 100) dayLists.clear();
    dayLists.set(id, list);
    days = list;
  }
  return days;
}
