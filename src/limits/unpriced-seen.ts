/**
 * How many requests of models without a price this process served to keys with a USD budget, by key
 * name (src/limits/accounting.ts counts them as it prices each request). The admin API's count of a
 * budget's unpriced requests (src/admin/unpriced-budget.ts) is a usage query it reuses for a while:
 * a change here says a reused count is out of date on this instance at once. Other instances' requests
 * reach it only when the reuse ends. Key names are few (one entry per key ever served so).
 */
const served = new Map<string, number>();

/** One more request of an unpriced model served to `keyName` (a key with a USD budget). */
export function noteUnpricedServed(keyName: string): void {
  served.set(keyName, (served.get(keyName) ?? 0) + 1);
}

/** How many requests of unpriced models this process served to `keyName` so far (0: none). */
export function unpricedServed(keyName: string): number {
  return served.get(keyName) ?? 0;
}
