/**
 * How many attempts each endpoint may have in flight, adapted to how it answers (docs/performance.md,
 * 'Webhook fan-out'), as TCP adapts its window: an endpoint starts at the configured cap; every attempt it
 * accepts quickly (2xx within FAST_MS) raises its limit, by one per attempt until it first struggles
 * (slow start: the limit doubles per round of attempts) and by one per round after that (additive
 * increase); a timeout, a 5xx, a 429 or a network failure halves it (multiplicative decrease, never
 * below MIN_LIMIT). A slow 2xx or another 4xx leaves it as it is: they say nothing about load.
 *
 * The limit never passes the ceiling (half the worker's slots by default), so one busy endpoint cannot
 * take every slot, and a slow or failing one shrinks to a couple of slots at once. The state is this
 * worker's own, in memory: no round trip per attempt and no shared row to contend on. With several
 * workers each adapts from what it sees; the cap the claim enforces across workers
 * (queue/claim-due-deliveries.ts) is the claiming worker's limit for that endpoint. A worker that
 * restarts starts again from the configured cap.
 */

/** A 2xx answered within this long counts as "quick". */
export const FAST_MS = 1_000;
const MIN_LIMIT = 2;
/** Endpoints remembered at most (the least recently seen are forgotten, back to the starting cap). */
const MAX_TRACKED = 10_000;

export interface AttemptSignal {
  /** The endpoint accepted the delivery (2xx). */
  delivered: boolean;
  durationMs: number;
  /** A failure that says the endpoint is overloaded or unreachable: timeout, 5xx, 429, network. */
  overloaded: boolean;
}

interface State {
  limit: number;
  /** Still in slow start (no struggle seen yet). */
  slowStart: boolean;
}

export class EndpointLimits {
  private readonly states = new Map<string, State>();

  constructor(
    /** Where every endpoint starts (the configured per-webhook cap). */
    private readonly initial: number,
    private readonly ceiling: number,
  ) {}

  /** The endpoint's current limit, a whole number of attempts. */
  limitOf(webhookId: string): number {
    return Math.floor(this.states.get(webhookId)?.limit ?? this.initial);
  }

  /** Limits that differ from the starting cap (what the claim needs to know). */
  adjusted(): { webhookIds: string[]; limits: number[] } {
    const webhookIds: string[] = [];
    const limits: number[] = [];
    for (const [id, s] of this.states) {
      const limit = Math.floor(s.limit);
      if (limit === this.initial) continue;
      webhookIds.push(id);
      limits.push(limit);
    }
    return { webhookIds, limits };
  }

  record(webhookId: string, signal: AttemptSignal): void {
    if (this.ceiling <= this.initial && !signal.overloaded) return;
    let s = this.states.get(webhookId);
    if (s) this.states.delete(webhookId); // re-inserted below: the map stays in order of last use
    s ??= { limit: this.initial, slowStart: true };
    if (signal.delivered && signal.durationMs <= FAST_MS) {
      s.limit = Math.min(this.ceiling, s.limit + (s.slowStart ? 1 : 1 / s.limit));
    } else if (signal.overloaded) {
      s.limit = Math.max(MIN_LIMIT, s.limit / 2);
      s.slowStart = false;
    }
    this.states.set(webhookId, s);
    if (this.states.size > MAX_TRACKED) this.states.delete(this.states.keys().next().value as string);
  }
}

/** What an attempt's outcome says about its endpoint's load. */
export function signalOf(outcome: { statusCode: number | null; error: string | null; durationMs: number }): AttemptSignal {
  const delivered = outcome.error === null;
  const code = outcome.statusCode;
  const overloaded = !delivered && (code === null || code === 429 || code >= 500);
  return { delivered, durationMs: outcome.durationMs, overloaded };
}
