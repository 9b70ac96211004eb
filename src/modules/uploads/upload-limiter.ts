/**
 * What uploads may hold of one process (docs/tracking-and-proof.md, "Upload limits"). An upload is a
 * body of up to 5 MiB held in memory while it arrives and while it is stored, so the request rate alone
 * lets one partner hold most of a process. Three bounds, each refused with 429 ERR_RATE_LIMITED and a
 * Retry-After before a byte of the body is read:
 *  - uploads in flight per partner (all its keys together): the partner waits for its own;
 *  - uploads in flight per process (all partners): what the process holds is bounded whoever sends;
 *  - bytes per partner in any 60 s: an upload is charged its announced length when admitted (so a
 *    refusal comes before the bytes), corrected to what arrived when it ends; a chunked body (no
 *    length) is charged as it arrives and refused the moment it passes the budget.
 * State is this process's own, like the in-flight counts it bounds: with N processes a partner may get
 * up to N times each figure, which still bounds every process.
 *
 * No I/O, no timers: `nowMs` is the caller's clock (the service's, so the test clock moves the window).
 */
import type { UploadLimits } from '../../config.js';

const WINDOW_MS = 60_000;

export type Refusal = { message: string; retryAfterSec: number };

/** One admitted upload: `charge` the bytes as they arrive (chunked), `release` once it is over. */
export interface UploadPass {
  /** Bytes that arrived beyond what was reserved; a refusal when they pass the partner's budget. */
  charge(bytes: number): Refusal | null;
  /** The upload ended (stored, refused or cut short): frees its places; `received` is what arrived. */
  release(received: number): void;
}

interface Charge {
  atMs: number;
  bytes: number;
}

export class UploadLimiter {
  private processInFlight = 0;
  private readonly inFlight = new Map<string, number>();
  private readonly charges = new Map<string, Charge[]>();

  constructor(
    private readonly limits: Pick<UploadLimits, 'inFlightPerPartner' | 'inFlightPerProcess' | 'bytesPerPartnerPerMinute'>,
    private readonly nowMs: () => number,
  ) {}

  /** Admits an upload of `declared` bytes (null: chunked) for `partnerId`, or says why not. */
  admit(partnerId: string, declared: number | null): UploadPass | Refusal {
    const now = this.nowMs();
    const mine = this.inFlight.get(partnerId) ?? 0;
    if (mine >= this.limits.inFlightPerPartner) {
      return {
        message: `At most ${this.limits.inFlightPerPartner} uploads of a partner at once; retry after one ends`,
        retryAfterSec: 1,
      };
    }
    if (this.processInFlight >= this.limits.inFlightPerProcess) {
      return { message: 'The service is receiving as many uploads as it takes at once; retry shortly', retryAfterSec: 1 };
    }
    const reserved = declared ?? 0;
    const over = this.overBudget(partnerId, reserved, now);
    if (over) return over;

    const charge: Charge = { atMs: now, bytes: reserved };
    this.chargesOf(partnerId).push(charge);
    this.inFlight.set(partnerId, mine + 1);
    this.processInFlight++;
    let released = false;
    let arrived = 0;
    return {
      charge: (bytes) => {
        arrived += bytes;
        if (arrived <= reserved) return null;
        const extra = arrived - charge.bytes;
        const refusal = this.overBudget(partnerId, extra, this.nowMs());
        charge.bytes = arrived;
        return refusal;
      },
      release: (received) => {
        if (released) return;
        released = true;
        // What arrived is what it cost (an announced length that never came is given back).
        charge.bytes = received;
        const left = (this.inFlight.get(partnerId) ?? 1) - 1;
        if (left === 0) this.inFlight.delete(partnerId);
        else this.inFlight.set(partnerId, left);
        this.processInFlight--;
      },
    };
  }

  /** Uploads in flight in this process (metrics, tests). */
  get inFlightCount(): number {
    return this.processInFlight;
  }

  private chargesOf(partnerId: string): Charge[] {
    let list = this.charges.get(partnerId);
    if (!list) {
      list = [];
      this.charges.set(partnerId, list);
    }
    return list;
  }

  /** Whether `more` bytes now would pass the partner's budget for the last 60 s; when, if so, they would fit. */
  private overBudget(partnerId: string, more: number, now: number): Refusal | null {
    const budget = this.limits.bytesPerPartnerPerMinute;
    const list = this.charges.get(partnerId) ?? [];
    // Charges older than the window are forgotten (the list is in time order).
    while (list.length > 0 && list[0].atMs <= now - WINDOW_MS) list.shift();
    if (list.length === 0) this.charges.delete(partnerId);
    let used = 0;
    for (const c of list) used += c.bytes;
    if (used + more <= budget) return null;
    // The earliest moment enough of the window has passed for `more` to fit (never, for more than the
    // budget itself: then a full minute, after which only this upload would count).
    let freed = used;
    let atMs = now + WINDOW_MS;
    for (const c of list) {
      freed -= c.bytes;
      if (freed + more <= budget) {
        atMs = c.atMs + WINDOW_MS;
        break;
      }
    }
    return {
      message: `At most ${budget} bytes of uploads per partner per minute; retry later`,
      retryAfterSec: Math.max(1, Math.ceil((atMs - now) / 1000)),
    };
  }
}

export function isRefusal(x: UploadPass | Refusal): x is Refusal {
  return 'retryAfterSec' in x;
}
