/**
 * Brute-force brake for the dashboard's sign-in (`POST /dashboard/login`, SPEC 9.4): a peer address
 * that entered {@link MAX_FAILURES} wrong keys within {@link WINDOW_MS} is refused (429 with
 * `Retry-After`) until its oldest failure in the window is older than the window — without the key it
 * sends being checked, so a guess made while refused cannot succeed either. Counted per peer address
 * of the TCP connection (never `X-Forwarded-For`, which the guesser writes); behind a reverse proxy
 * every browser shares the proxy's address and so the budget (README). Kept in this process's memory,
 * like the sessions; at most {@link MAX_PEERS} addresses are tracked (the longest-idle goes first).
 */

/** Wrong keys a peer may enter within {@link WINDOW_MS}. */
export const MAX_FAILURES = 10;
/** The sliding window of the count, ms (15 min). */
export const WINDOW_MS = 15 * 60_000;
/** Most peer addresses tracked at once. */
export const MAX_PEERS = 10_000;

/** Failed sign-ins per peer address. */
export class SignInThrottle {
  private failures = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds the peer must wait before it may try again; 0 when it may try now. */
  retryAfterSeconds(peer: string): number {
    const times = this.recent(peer);
    if (times.length < MAX_FAILURES) return 0;
    return Math.max(1, Math.ceil((times[times.length - MAX_FAILURES] + WINDOW_MS - this.now()) / 1000));
  }

  /** Records a wrong key entered from `peer`. */
  failed(peer: string): void {
    const times = this.recent(peer);
    times.push(this.now());
    this.failures.delete(peer); // re-insert: the map's order is the order of last activity
    this.failures.set(peer, times.slice(-MAX_FAILURES));
    while (this.failures.size > MAX_PEERS) this.failures.delete(this.failures.keys().next().value!);
  }

  /** A successful sign-in clears the peer's count. */
  succeeded(peer: string): void {
    this.failures.delete(peer);
  }

  private recent(peer: string): number[] {
    const since = this.now() - WINDOW_MS;
    const times = (this.failures.get(peer) ?? []).filter((t) => t > since);
    if (times.length === 0) this.failures.delete(peer);
    return times;
  }
}

/**
 * The sign-in refusal's message for a wait of `seconds` (the `Retry-After` beside it): "try again in
 * 40 s" up to 90 s, above that in minutes, rounded up, "try again in about 15 minutes" (it read "in
 * 895 s", tryout5).
 */
export function signInRefusal(seconds: number): string {
  const when = seconds <= 90 ? `in ${seconds} s` : `in about ${Math.ceil(seconds / 60)} minutes`;
  return `Too many wrong keys from this address; try again ${when}.`;
}
