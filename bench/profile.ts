/**
 * `--profile`: the CPU profile of this process (the API and worker of bench/run.ts)
 * from now until `stop`, written to bench/results/profiles/<scenario>.cpuprofile (open it in Chrome
 * DevTools or speedscope). Sampling costs some throughput: figures of a profiled run are not comparable
 * with others.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

export async function startProfile(): Promise<{ stop: (scenario: string) => Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async (scenario) => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      const dir = 'bench/results/profiles';
      mkdirSync(dir, { recursive: true });
      const file = `${dir}/${scenario.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
      console.log(`profile: ${file}`);
    },
  };
}
