/**
 * A last write at shutdown tried again while the database is away (try20 D2): the store's last flush
 * and the shared key counters' last report of key-limit use, until the shutdown grace period ends.
 */

/**
 * Runs `step` (which answers how many things it still could not write) until it answers 0 or `until`
 * (ms since the epoch; a function is read again before each wait, so a second signal can move the end
 * to now: review20 R4) has passed, waiting 0.1 s, then twice as long each time up to 2 s, between
 * tries. Always runs `step` once. Returns the count of the last try. Throws what `step` throws.
 */
export async function retryUntil(until: RetryEnd, step: () => Promise<number>): Promise<number> {
  for (let wait = 100; ; wait = Math.min(2 * wait, 2_000)) {
    const left = await step();
    const end = endOf(until);
    if (left === 0 || Date.now() >= end) return left;
    // short sleeps, so an end moved to now is seen within 0.1 s
    const stop = Date.now() + Math.min(wait, end - Date.now());
    while (Date.now() < Math.min(stop, endOf(until))) await Bun.sleep(Math.min(100, stop - Date.now()));
  }
}

/** When the retries end: ms since the epoch, or a function answering it (read before each wait). */
export type RetryEnd = number | (() => number);

/** {@link RetryEnd} as ms since the epoch now. */
export function endOf(until: RetryEnd): number {
  return typeof until === "function" ? until() : until;
}

/**
 * Waits for `work` until it settles or `until` (ms since the epoch, or a function read again every
 * 0.1 s: a second signal moves it to now) has passed: whether it settled by then. A database that stopped
 * answering (sockets open, nothing answers) must not hold a stop past its grace period. Work that has
 * already settled counts as settled even when `until` has passed (its callbacks get one turn of the
 * event loop). Never throws (a rejection counts as settled).
 */
export async function settledBy(work: Promise<unknown>, until: RetryEnd): Promise<boolean> {
  let done = false;
  const settled = work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await Promise.race([settled, Bun.sleep(0)]);
  while (!done) {
    const left = endOf(until) - Date.now();
    if (left <= 0) return false;
    await Promise.race([settled, Bun.sleep(Math.min(100, left))]);
  }
  return true;
}
