/**
 * Every partner, developer and sign-in operation the SDK was generated for goes through the SDK in one of
 * the SDK test files: each file's list in sdk-coverage.ts is checked by that file, and here the lists
 * together are checked against the SDK's OPERATIONS.
 */
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/index.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

describe('coverage', () => {
  it('every partner, developer and sign-in operation the SDK was generated for is listed for an SDK test file', () => {
    const listed = new Set<string>(Object.values(SDK_COVERAGE).flat());
    const missing = OPERATIONS.map((op) => `${op.method} ${op.path}`).filter((op) => !listed.has(op));
    expect(
      missing,
      'operations no SDK test sends: send them in a packages/sdk/test/*.e2e.test.ts and list them in sdk-coverage.ts',
    ).toEqual([]);
    expect(OPERATIONS.length).toBeGreaterThan(20);
  });

  it('lists only operations the SDK has', () => {
    const known = new Set(OPERATIONS.map((op) => `${op.method} ${op.path}`));
    expect(
      Object.values(SDK_COVERAGE)
        .flat()
        .filter((op) => !known.has(op)),
    ).toEqual([]);
  });
});
