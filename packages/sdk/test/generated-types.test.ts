/**
 * The SDK's generated types are in sync with the documents the service serves (docs/decisions-log.md, 'SDK'): they are
 * rendered again from the current routes, exactly as `npm run sdk:generate` does, and compared with the
 * checked-in files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { checkedIn, GENERATED_FILES, OPERATIONS_FILE, renderAll } from '../scripts/codegen.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** Where two texts first differ, as a line number and both lines. */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `line ${i + 1}: generated ${JSON.stringify(a[i] ?? '<end>')}, checked in ${JSON.stringify(b[i] ?? '<end>')}`;
  }
  return 'no line differs';
}

describe('@partner-logistics/sdk generated types', () => {
  it('match a fresh generation from the documents the app serves', async () => {
    const rendered = await renderAll(t.live);
    expect(rendered.map((r) => r.file)).toEqual([...GENERATED_FILES.map((g) => g.file), OPERATIONS_FILE]);
    for (const { file, text } of rendered) {
      const current = checkedIn(file);
      if (current === text) continue;
      expect.fail(
        current === null
          ? `packages/sdk/${file} is missing: run npm run sdk:generate`
          : `packages/sdk/${file} is out of date with the routes: run npm run sdk:generate (and commit the result). First difference at ${firstDifference(text, current)}`,
      );
    }
  });
});
