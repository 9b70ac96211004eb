import { describe, expect, it } from 'vitest';
import { isRefusal, type Refusal, UploadLimiter, type UploadPass } from './upload-limiter.js';

const limits = { inFlightPerPartner: 2, inFlightPerProcess: 3, bytesPerPartnerPerMinute: 1000, bodyTimeoutMs: 30_000 };

function admitted(x: UploadPass | Refusal): UploadPass {
  if (isRefusal(x)) throw new Error(`refused: ${x.message}`);
  return x;
}

describe('UploadLimiter', () => {
  it('caps uploads in flight per partner and per process, and gives the places back on release', () => {
    const limiter = new UploadLimiter(limits, () => 0);
    const a1 = admitted(limiter.admit('a', 10));
    admitted(limiter.admit('a', 10));
    expect(limiter.admit('a', 10)).toMatchObject({ retryAfterSec: 1 });
    admitted(limiter.admit('b', 10));
    expect(limiter.admit('c', 10)).toMatchObject({ retryAfterSec: 1 });
    a1.release(10);
    a1.release(10); // twice is once
    expect(limiter.inFlightCount).toBe(2);
    admitted(limiter.admit('c', 10));
  });

  it('charges the announced length at admission, then what arrived; the window is 60 s', () => {
    let now = 0;
    const limiter = new UploadLimiter(limits, () => now);
    const first = admitted(limiter.admit('a', 600));
    expect(limiter.admit('a', 600)).toMatchObject({ retryAfterSec: 60 });
    // Only 100 of the 600 announced arrived: the rest is given back.
    first.release(100);
    now = 10_000;
    admitted(limiter.admit('a', 800)).release(800);
    const refusal = limiter.admit('a', 200);
    // 100 at 0 s and 800 at 10 s: 200 more fit once the first has left the window, at 60 s.
    expect(refusal).toMatchObject({ retryAfterSec: 50 });
    now = 60_000;
    admitted(limiter.admit('a', 100)).release(100);
  });

  it('charges a chunked body as it arrives and refuses it once past the budget', () => {
    const limiter = new UploadLimiter(limits, () => 0);
    const pass = admitted(limiter.admit('a', null));
    expect(pass.charge(600)).toBeNull();
    expect(pass.charge(300)).toBeNull();
    expect(pass.charge(200)).toMatchObject({ retryAfterSec: 60 });
  });
});
