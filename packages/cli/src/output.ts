/**
 * What the CLI prints: aligned tables and `name: value` records for people, the API's own JSON with
 * `--json` for scripts, and errors in plain words on stderr (the API's message, its code, and for a
 * validation failure each field with what is wrong with it).
 */
import { PartnerApiError } from '@partner-logistics/sdk';

/** A failure the CLI explains itself (exit code 1, or 2 for a usage mistake). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export type Column<T> = [header: string, value: (row: T) => unknown];

export interface Output {
  readonly json: boolean;
  /** One line on stdout. */
  line(text: string): void;
  /** A note for people on stderr (never mixed into `--json` output). */
  note(text: string): void;
  /** `data` as JSON with `--json`; otherwise whatever `human` prints. */
  result(data: unknown, human: () => void): void;
  /** A line of a stream: `data` as one line of JSON with `--json` (NDJSON); otherwise what `human` prints. */
  streamed(data: unknown, human: () => void): void;
  table<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>, empty?: string): void;
  record(pairs: ReadonlyArray<[string, unknown]>): void;
  /** `Page 2 of 5 (93 orders)` under a page of a list. */
  pageFooter(page: { page: number; pageSize: number; total: number }, noun: string): void;
  /** A page of a list as the result: with `--json` the page; otherwise its rows (`No <noun>` when none), then the footer. */
  pagedResult<T>(
    page: { page: number; pageSize: number; total: number; items: readonly T[] },
    columns: ReadonlyArray<Column<T>>,
    noun: string,
  ): void;
}

export function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function createOutput(json: boolean, stdout = process.stdout, stderr = process.stderr): Output {
  const line = (text: string) => void stdout.write(`${text}\n`);
  const out: Output = {
    json,
    line,
    note: (text) => void stderr.write(`${text}\n`),
    result(data, human) {
      if (json) line(JSON.stringify(data, null, 2));
      else human();
    },
    streamed(data, human) {
      if (json) line(JSON.stringify(data));
      else human();
    },
    table(rows, columns, empty = '(none)') {
      if (rows.length === 0) {
        line(empty);
        return;
      }
      const cells = rows.map((row) => columns.map(([, value]) => cell(value(row))));
      const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((c) => c[i].length)));
      const format = (values: string[]) =>
        values
          .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
          .join('  ')
          .trimEnd();
      line(format(columns.map(([header]) => header)));
      for (const c of cells) line(format(c));
    },
    pageFooter(page, noun) {
      line(`Page ${page.page} of ${Math.max(1, Math.ceil(page.total / page.pageSize))} (${page.total} ${noun})`);
    },
    pagedResult(page, columns, noun) {
      out.result(page, () => {
        out.table(page.items, columns, `No ${noun}`);
        out.pageFooter(page, noun);
      });
    },
    record(pairs) {
      const width = Math.max(...pairs.map(([name]) => name.length));
      for (const [name, value] of pairs) line(`${`${name}:`.padEnd(width + 1)} ${cell(value)}`);
    },
  };
  return out;
}

/** An error in plain words, for stderr. */
export function describeError(err: unknown): string {
  if (err instanceof PartnerApiError) {
    if (err.code === 'ERR_NETWORK') return `Error: could not reach the API (${err.message})`;
    const lines = [`Error: ${err.message} (${err.code}${err.status ? `, HTTP ${err.status}` : ''})`];
    if (Array.isArray(err.details)) {
      for (const d of err.details as Array<{ field?: unknown; messages?: unknown }>) {
        if (typeof d?.field === 'string' && Array.isArray(d.messages))
          lines.push(`  ${d.field || '(body)'}: ${d.messages.join('; ')}`);
      }
    }
    return lines.join('\n');
  }
  if (err instanceof CliError) return `Error: ${err.message}`;
  return `Error: ${err instanceof Error ? err.message : String(err)}`;
}

export function exitCodeOf(err: unknown): number {
  return err instanceof CliError ? err.exitCode : 1;
}

/** A local time with its offset, to the second: `2026-11-24 06:12:03 +04:00`. */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const offset = -d.getTimezoneOffset();
  const pad = (n: number) => String(Math.abs(n)).padStart(2, '0');
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${date} ${time} ${offset < 0 ? '-' : '+'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}
