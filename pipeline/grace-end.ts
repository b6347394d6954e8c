/**
 * The end of a shutdown's grace period as the pipeline sees it (SPEC D-3: `server.shutdown_grace_ms`
 * over, or a second signal). A request still waiting on its upstream then has its call aborted and is
 * answered a 503 `gateway_stopping` (attempt-loop.ts); a committed stream ends through the commit point's
 * `OpenStreams` instead.
 *
 * The calls waiting for their reply's commit are kept in a set that {@link GraceEnd.end} walks, not as
 * listeners on one shared `AbortSignal`: Bun's `EventTarget` scans its listener list on every add and
 * remove, so a listener per call on a signal every request shares cost 0.4–0.9 µs per call when idle and
 * ~4 µs with 1,000 calls waiting (review21 R4); a set's add and delete are constant time.
 */
export class GraceEnd {
  private readonly controller = new AbortController();
  /** Aborted at the end: the waits before an attempt (a concurrency slot, a retry's pause) end on it. */
  readonly signal: AbortSignal = this.controller.signal;
  private readonly calls = new Set<StoppableCall>();

  /** Whether the grace period is over. */
  get over(): boolean {
    return this.signal.aborted;
  }

  /** Stops `call` at the end ({@link StoppableCall.stopNow}) until {@link unwatch}; false (not kept) when the end has come already. */
  watch(call: StoppableCall): boolean {
    if (this.signal.aborted) return false;
    this.calls.add(call);
    return true;
  }

  /** `call` committed its reply or is over: the end no longer concerns it. */
  unwatch(call: StoppableCall): void {
    this.calls.delete(call);
  }

  /** The grace period is over: the signal aborts, then every call still watched is stopped. Once only. */
  end(): void {
    if (this.signal.aborted) return;
    this.controller.abort();
    const calls = [...this.calls];
    this.calls.clear();
    for (const c of calls) c.stopNow();
  }
}

/** An upstream call the end of the grace period aborts (pipeline/execute.ts ClientAbort). */
export interface StoppableCall {
  /** Aborts the call (nothing more: the attempt loop answers the 503). */
  stopNow(): void;
}
