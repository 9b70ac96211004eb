/**
 * A loop that runs on demand: `trigger()` starts a run unless one is going, in which case exactly one
 * more run follows it (a trigger during a run may concern work the run already passed). Runs never
 * overlap, errors are logged and do not stop later runs.
 */
export class Pump {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  trigger = (): void => {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  };

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.run();
      } catch (err) {
        this.onError(err);
      }
    } while (this.again && !this.stopped);
  }

  /** No new runs; resolves when the current one has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
