/**
 * npx tsx bench/profile-top.ts <a.cpuprofile> [<b.cpuprofile>] [--top=30] [--per=<requests>[,<requests>]]
 *
 * The functions that took the most CPU in a profile (self time, summed by function and file), or, given
 * two, side by side with the difference. `--per` divides each profile's times by its number of requests,
 * so two runs of different lengths compare in µs per request.
 */
import { readFileSync } from 'node:fs';
import { arg } from './args.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time in µs by "function (file:line)". */
function selfTimes(file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const names = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}` : '';
    names.set(node.id, `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`);
  }
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = names.get(id) ?? '?';
    times.set(name, (times.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return times;
}

const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const top = Number(arg('top', '30'));
const per = arg('per', '').split(',').filter(Boolean).map(Number);
const runs = files.map((file, i) => {
  const divisor = per[i] ?? 1;
  return new Map([...selfTimes(file)].map(([name, us]) => [name, us / divisor]));
});
const names = new Set(runs.flatMap((run) => [...run.keys()]));
const rows = [...names].map((name) => ({ name, values: runs.map((run) => run.get(name) ?? 0) }));
const key = (r: (typeof rows)[number]) => (runs.length === 2 ? Math.abs(r.values[1] - r.values[0]) : r.values[0]);
rows.sort((a, b) => key(b) - key(a));
const unit = per.length ? 'µs/request' : 'ms';
const show = (v: number) => (per.length ? v.toFixed(2) : (v / 1000).toFixed(0)).padStart(9);
console.log(`${runs.map((_, i) => `run ${i + 1}`.padStart(9)).join('')}${runs.length === 2 ? '     diff' : ''}  (${unit})`);
for (const r of rows.slice(0, top)) {
  const diff = runs.length === 2 ? show(r.values[1] - r.values[0]) : '';
  console.log(`${r.values.map(show).join('')}${diff}  ${r.name}`);
}
const totals = runs.map((run) => [...run.values()].reduce((s, v) => s + v, 0));
console.log(`${totals.map(show).join('')}${runs.length === 2 ? show(totals[1] - totals[0]) : ''}  total`);
