/**
 * Waiting in a test for something another process (or the gateway's background work) does: polling a
 * condition with a time limit, instead of a fixed sleep.
 */

/**
 * Polls `cond` (sync or async) every `everyMs` milliseconds (default 50) until it returns true;
 * resolves at once when it already holds. Throws `Error("timed out waiting for <what>")` when it still
 * does not hold `ms` milliseconds after the call; an error thrown by `cond` itself is passed on.
 */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string, everyMs = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}
