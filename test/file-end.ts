/**
 * A set-up file of the api tier (vitest.config.ts), run again for each test file: when the file ends,
 * after its own afterAll hooks, the apps it left open are closed, so that nothing it started runs on
 * beside the next files of the same worker (docs/testing.md, 'Tiers').
 */
import { afterAll } from 'vitest';
import { closeLeftoverApps } from './harness.js';

afterAll(closeLeftoverApps);
