/**
 * Deadlines without a timer each: the request body's read (guard.ts, SPEC G-4's body timeout), an
 * upstream call's response headers (execute.ts, SPEC 6.3's header timeout) and the silence before a
 * reply's first content (commit.ts, SPEC 6.4's idle timeout) are each a {@link Deadline} on one shared
 * list, which one interval sweeps while any is armed. Arming a Bun timer and clearing it costs about
 * 1.8 µs a request in-process, a list entry about 0.6 µs (docs/performance.md items 213 and 235); a
 * request that arms three deadlines and renews one per upstream read makes no timer at all.
 *
 * A deadline of `ms` fires on the first sweep at least `ms` after it was armed (or last
 * {@link Deadline.renew renewed}): between `ms` and `ms` plus one sweep period later, and later still
 * when the event loop is held (as a timer would). The period is a quarter of the shortest deadline
 * armed (at least 10 ms, at most {@link MAX_SWEEP_MS}): 250 ms for the defaults (60 s header, 120 s
 * body, 300 s idle).
 */

/** The longest period of the sweep, ms. */
export const MAX_SWEEP_MS = 250;

/**
 * One deadline. A subclass says what happens when it is due ({@link expire}, called once from the
 * sweep after the deadline left the list); {@link arm} puts it on the list, {@link renew} moves its
 * due time to `ms` from now (as a timer's `refresh()`), {@link disarm} takes it off (idempotent).
 * The list runs through the deadlines themselves (adding and removing one is a few pointer writes).
 */
export abstract class Deadline {
  /** When it is due, performance.now() ms. */
  dueAt = 0;
  /** Its length, ms (what {@link renew} counts from now). */
  ms = 0;
  /** Neighbours on the list; `armed` while on it. */
  prev: Deadline | undefined = undefined;
  next: Deadline | undefined = undefined;
  armed = false;

  /** What happens when the deadline is due (called once, after it left the list). */
  abstract expire(): void;

  /** Arms the deadline `ms` from now (re-arming an armed one moves its due time). */
  arm(ms: number): void {
    this.ms = ms;
    this.dueAt = performance.now() + ms;
    if (this.armed) return;
    this.armed = true;
    this.next = first;
    if (first) first.prev = this;
    first = this;
    const period = periodFor(ms);
    if (sweep !== undefined && period >= periodMs) return;
    if (sweep !== undefined) clearInterval(sweep);
    periodMs = period;
    sweep = setInterval(sweepOnce, period);
    sweep.unref?.();
  }

  /** Moves the due time to {@link ms} from now; nothing when not armed. */
  renew(): void {
    this.dueAt = performance.now() + this.ms;
  }

  /** Takes the deadline off the list; idempotent. */
  disarm(): void {
    if (!this.armed) return;
    this.armed = false;
    if (this.prev) this.prev.next = this.next;
    else first = this.next;
    if (this.next) this.next.prev = this.prev;
    this.prev = this.next = undefined;
  }
}

/** A deadline that calls a function when due (where a subclass would be one class for one call site). */
export class CallbackDeadline extends Deadline {
  constructor(private readonly onDue: () => void) {
    super();
  }

  /** {@link Deadline.expire}: the function. */
  expire(): void {
    this.onDue();
  }
}

let first: Deadline | undefined;
let sweep: ReturnType<typeof setInterval> | undefined;
let periodMs = MAX_SWEEP_MS;

/** The sweep's period for a deadline of `ms`: a quarter of it, 10–{@link MAX_SWEEP_MS} ms. */
function periodFor(ms: number): number {
  return Math.max(10, Math.min(MAX_SWEEP_MS, Math.floor(ms / 4)));
}

/**
 * One pass: expires the deadlines that are due; stops the sweep when none is armed, and slows it down
 * again when the short deadline that sped it up is gone (a 40 ms timeout once does not keep a busy
 * gateway sweeping every 10 ms).
 */
function sweepOnce(): void {
  if (first === undefined) {
    clearInterval(sweep);
    sweep = undefined;
    periodMs = MAX_SWEEP_MS;
    return;
  }
  const now = performance.now();
  // The due ones first, then their expiries: an expiry may disarm, renew or arm others (the list
  // changes under a walk), and one disarmed or renewed by an earlier expiry is no longer due.
  let due: Deadline[] | undefined;
  for (let d: Deadline | undefined = first; d !== undefined; d = d.next) if (d.dueAt <= now) (due ??= []).push(d);
  if (due !== undefined)
    for (const d of due) {
      if (!d.armed || d.dueAt > now) continue;
      d.disarm();
      try {
        d.expire();
      } catch {
        // an expiry that throws must not keep the others from theirs
      }
    }
  // what is armed now, those (re-)armed by an expiry included
  let shortest = Infinity;
  for (let d: Deadline | undefined = first; d !== undefined; d = d.next) if (d.ms < shortest) shortest = d.ms;
  if (shortest === Infinity || sweep === undefined) return;
  const period = periodFor(shortest);
  if (period <= periodMs) return;
  clearInterval(sweep);
  periodMs = period;
  sweep = setInterval(sweepOnce, period);
  sweep.unref?.();
}

/** The sweep's period now, ms (tests). */
export function sweepPeriodMs(): number {
  return periodMs;
}

/** Deadlines armed now (tests). */
export function armedDeadlines(): number {
  let n = 0;
  for (let d = first; d !== undefined; d = d.next) n++;
  return n;
}
