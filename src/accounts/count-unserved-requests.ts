/**
 * Counts the requests an instance answered for want of any account of a provider (503 `no_account`, or
 * 404 for a bare model name guessed onto the provider), per provider id, in memory since it started:
 * `accounts status` and the dashboard say so next to a provider without accounts (src/accounts/status.ts).
 */

/**
 * The requests an instance answered for want of any account of one provider since it started (in
 * memory): how many, and the last one's time (ms since the epoch) and status (503 `no_account`, or 404
 * for a bare model name guessed onto the provider).
 */
export interface UnservedRequests {
  requests: number;
  lastAt: number;
  lastStatus: number;
}

/** The unserved requests of every provider, keyed by provider id. O(1) per call. */
export class UnservedCounts {
  private readonly unserved = new Map<string, UnservedRequests>();

  /** Counts one request of `providerId` answered with `status` at `at` (ms since the epoch). */
  count(providerId: string, status: number, at: number): void {
    const u = this.unserved.get(providerId);
    if (u) Object.assign(u, { requests: u.requests + 1, lastAt: at, lastStatus: status });
    else this.unserved.set(providerId, { requests: 1, lastAt: at, lastStatus: status });
  }

  /** The provider's unserved requests (a copy), or undefined when none. */
  of(providerId: string): UnservedRequests | undefined {
    const u = this.unserved.get(providerId);
    return u && { ...u };
  }
}
