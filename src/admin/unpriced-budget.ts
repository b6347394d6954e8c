/**
 * A USD budget's blind spot, said where its use is shown (try18 D17; SPEC 9.5, 9.6): a request served
 * by a model without a price (no `settings.pricing` entry, not in the price table) costs an unknown
 * amount, which no USD budget can count, so the budget's `used` leaves it out. `GET /admin/api/keys`
 * adds to each USD budget with an open window how many such requests the key made in it (`unpriced`),
 * read from the same usage rows the Usage table marks "unpriced" from (`usage.unpriced`, set when the
 * request was priced: src/limits/accounting.ts), which are written where every instance of a shared
 * store reads them (on SQLite a read flushes first; on PostgreSQL a row is written within about a second).
 */
import type { BudgetUse } from "../../pipeline/ports.ts";
import type { UsageStore } from "../store/usage.ts";

/**
 * How long before a window's start a request still counts as the window's, ms. A usage row's time is its
 * request's arrival; the window opened when the first request was admitted, a moment after it arrived:
 * without this margin that request would never be counted. A request of the previous window counts here
 * only when that window ended within the margin before this one opened.
 */
export const WINDOW_START_SLACK_MS = 5_000;

/** A budget's use with, for a USD budget whose window is open, the requests of unpriced models in it. */
export type BudgetUseNoted = BudgetUse & { unpriced?: number };

/**
 * `budgets` (a key's use, as the limit counters report it) with `unpriced` set on each USD budget that
 * has an open window: the requests of the key `keyName` since the window opened (less
 * {@link WINDOW_START_SLACK_MS}) that a model without a price served. One usage query per distinct
 * window start; token budgets (which count those requests' tokens) and unopened windows are returned
 * as they are. The rows are matched by the key's name: a config key and a stored key of the same name
 * are counted together, as the Usage table counts them.
 * @throws what the store's `usageSummary` throws (StoreError `unavailable`, `closed`)
 */
export async function withUnpricedCounts(store: Pick<UsageStore, "usageSummary">, keyName: string, budgets: readonly BudgetUse[]): Promise<BudgetUseNoted[]> {
  const counts = new Map<number, Promise<number>>();
  const count = (since: number) => {
    let n = counts.get(since);
    if (n === undefined) {
      n = Promise.resolve(store.usageSummary({ sinceMs: since - WINDOW_START_SLACK_MS, by: "key", filter: { key: keyName } })).then((rows) => rows.reduce((sum, r) => sum + (Number(r.unpriced) || 0), 0));
      counts.set(since, n);
    }
    return n;
  };
  return Promise.all(budgets.map(async (b) => (b.budget.usd !== undefined && b.startedAt !== undefined ? { ...b, unpriced: await count(b.startedAt) } : b)));
}
