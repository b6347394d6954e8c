/**
 * The account registry's end timer (SPEC 9.4: a page never needs a reload to show a cooldown end): one
 * timer armed for the earliest known end of a timed state (a cooldown, a lock, a removed pairing, an open
 * circuit), which, when it fires, hands the scan the period (from, now] whose ends are to be published
 * and lets it arm the next. Split from registry.ts (2026-12-05).
 */

/** One timer for the earliest end; ends up to {@link upTo} were published. */
export class EndTimer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private at = Infinity;
  /** Ends up to this time (ms since the epoch) were already published. */
  upTo: number;

  /**
   * `now`: the registry's clock, ms since the epoch. `scan(from, now)`: publishes the ends in (from, now]
   * and arms the timer for the later ones. `enabled`: false when nobody can listen (no event bus): the
   * timer is never armed.
   */
  constructor(
    private readonly now: () => number,
    private readonly scan: (from: number, now: number) => void,
    private readonly enabled: boolean,
  ) {
    this.upTo = now();
  }

  /** Arms the timer for a state that ends at `until` (ms since the epoch), when it is the earliest not yet published. */
  arm(until: number): void {
    if (!this.enabled || until <= this.upTo || until >= this.at) return;
    if (this.timer) clearTimeout(this.timer);
    this.at = until;
    // +5 ms: the timer may fire a little early against the clock's own reading.
    this.timer = setTimeout(() => this.fire(), Math.max(0, until - this.now()) + 5);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Publishes every end since the last scan (also before the timer fired) and re-arms for the next. */
  fire(): void {
    if (this.timer) clearTimeout(this.timer); // when called before the timer fired
    this.timer = undefined;
    this.at = Infinity;
    const now = this.now();
    const from = this.upTo;
    this.upTo = now;
    this.scan(from, now);
  }

  /** Stops the timer (shutdown). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }
}
