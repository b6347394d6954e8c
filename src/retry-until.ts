/**
 * A last write at shutdown tried again while the database is away (try20 D2): the store's last flush
 * and the shared key counters' last report of key-limit use, until the shutdown grace period ends.
 */

/**
 * Runs `step` (which answers how many things it still could not write) until it answers 0 or `until`
 * (ms since the epoch) has passed, waiting 0.1 s, then twice as long each time up to 2 s, between
 * tries. Always runs `step` once. Returns the count of the last try. Throws what `step` throws.
 */
export async function retryUntil(until: number, step: () => Promise<number>): Promise<number> {
  for (let wait = 100; ; wait = Math.min(2 * wait, 2_000)) {
    const left = await step();
    if (left === 0 || Date.now() >= until) return left;
    await Bun.sleep(Math.min(wait, until - Date.now()));
  }
}
