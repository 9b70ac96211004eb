import { describe, expect, it } from 'vitest';
import { EndpointLimits, FAST_MS, signalOf } from './endpoint-limits.js';

const quick = { delivered: true, durationMs: 20, overloaded: false };
const slow = { delivered: true, durationMs: FAST_MS + 1, overloaded: false };
const overloaded = { delivered: false, durationMs: 10_000, overloaded: true };

describe('an endpoint’s adaptive cap', () => {
  it('starts at the configured cap and grows by one per quick 2xx until it first struggles, up to the ceiling', () => {
    const limits = new EndpointLimits(8, 32);
    expect(limits.limitOf('a')).toBe(8);
    for (let i = 0; i < 10; i++) limits.record('a', quick);
    expect(limits.limitOf('a')).toBe(18);
    for (let i = 0; i < 100; i++) limits.record('a', quick);
    expect(limits.limitOf('a')).toBe(32);
    expect(limits.adjusted()).toEqual({ webhookIds: ['a'], limits: [32] });
  });

  it('halves on timeouts, 5xx, 429 and network failures, never below 2, then grows by one per round only', () => {
    const limits = new EndpointLimits(8, 32);
    limits.record('a', overloaded);
    expect(limits.limitOf('a')).toBe(4);
    for (let i = 0; i < 5; i++) limits.record('a', overloaded);
    expect(limits.limitOf('a')).toBe(2);
    // Additive increase: about one more per round of `limit` quick answers.
    for (let i = 0; i < 2; i++) limits.record('a', quick);
    expect(limits.limitOf('a')).toBe(2);
    limits.record('a', quick);
    expect(limits.limitOf('a')).toBe(3);
  });

  it('a slow 2xx or another 4xx changes nothing; other endpoints keep their own caps', () => {
    const limits = new EndpointLimits(8, 32);
    limits.record('a', slow);
    limits.record('a', signalOf({ statusCode: 404, error: 'HTTP 404', durationMs: 5 }));
    expect(limits.limitOf('a')).toBe(8);
    limits.record('b', overloaded);
    expect(limits.limitOf('a')).toBe(8);
    expect(limits.limitOf('b')).toBe(4);
    expect(limits.adjusted()).toEqual({ webhookIds: ['b'], limits: [4] });
  });

  it('tells overload from other failures', () => {
    expect(signalOf({ statusCode: 503, error: 'HTTP 503', durationMs: 1 }).overloaded).toBe(true);
    expect(signalOf({ statusCode: 429, error: 'HTTP 429', durationMs: 1 }).overloaded).toBe(true);
    expect(signalOf({ statusCode: null, error: 'timeout after 10 s', durationMs: 10_000 }).overloaded).toBe(true);
    expect(signalOf({ statusCode: 400, error: 'HTTP 400', durationMs: 1 }).overloaded).toBe(false);
    expect(signalOf({ statusCode: 204, error: null, durationMs: 1 })).toEqual({
      delivered: true,
      durationMs: 1,
      overloaded: false,
    });
  });
});
