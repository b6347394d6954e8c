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
import { unpricedServed } from "../limits/unpriced-seen.ts";

/**
 * How long before a window's start a request still counts as the window's, ms. A usage row's time is its
 * request's arrival; the window opened when the first request was admitted, a moment after it arrived:
 * without this margin that request would never be counted. A request of the previous window counts here
 * only when that window ended within the margin before this one opened.
 */
export const WINDOW_START_SLACK_MS = 5_000;

/**
 * How long a window's count is reused, ms, while this instance served the key no request of an
 * unpriced model (src/limits/unpriced-seen.ts; one it served makes the next list ask again). The count
 * is a usage query over the whole window (up to 30 days of the key's rows; on SQLite it runs on the
 * thread that serves requests: ~100–150 ms per key on 300,000 rows over 29 days, review19 R5), and the
 * Keys page reads the list every few seconds, every second under traffic: reused, it runs at most once
 * per key this often. Another instance's requests (a shared PostgreSQL) show within this much.
 */
export const UNPRICED_COUNT_TTL_MS = 10_000;

/** Counts already made, per store: `keyName NUL windowStart` → when it was read (ms), the count, and {@link unpricedServed} then. */
const cached = new WeakMap<object, Map<string, { at: number; count: number; served: number }>>();

/** A budget's use with, for a USD budget whose window is open, the requests of unpriced models in it. */
export type BudgetUseNoted = BudgetUse & { unpriced?: number };

/**
 * `budgets` (a key's use, as the limit counters report it) with `unpriced` set on each USD budget that
 * has an open window: the requests of the key `keyName` since the window opened (less
 * {@link WINDOW_START_SLACK_MS}) that a model without a price served. One usage query per distinct
 * window start; token budgets (which count those requests' tokens) and unopened windows are returned
 * as they are. The rows are matched by the key's name: a config key and a stored key of the same name
 * are counted together, as the Usage table counts them. A count is reused for
 * {@link UNPRICED_COUNT_TTL_MS} (`now`: the clock, ms); a count the store cannot give (StoreError
 * `unavailable`, `closed`: a shared database away) is left out, so the key list still answers.
 */
export async function withUnpricedCounts(store: Pick<UsageStore, "usageSummary">, keyName: string, budgets: readonly BudgetUse[], now = Date.now()): Promise<BudgetUseNoted[]> {
  let memo = cached.get(store);
  if (memo === undefined) cached.set(store, (memo = new Map()));
  const count = async (since: number): Promise<number | undefined> => {
    const id = `${keyName}\u0000${since}`;
    const hit = memo.get(id);
    const served = unpricedServed(keyName);
    if (hit !== undefined && now - hit.at < UNPRICED_COUNT_TTL_MS && hit.served === served) return hit.count;
    try {
      const rows = await store.usageSummary({ sinceMs: since - WINDOW_START_SLACK_MS, by: "key", filter: { key: keyName } });
      const n = rows.reduce((sum, r) => sum + (Number(r.unpriced) || 0), 0);
      // windows that closed are not asked again: drop what is stale before adding
      for (const [k, v] of memo) if (now - v.at >= UNPRICED_COUNT_TTL_MS) memo.delete(k);
      memo.set(id, { at: now, count: n, served });
      return n;
    } catch {
      return undefined;
    }
  };
  return Promise.all(
    budgets.map(async (b) => {
      if (b.budget.usd === undefined || b.startedAt === undefined) return b;
      const unpriced = await count(b.startedAt);
      return unpriced === undefined ? b : { ...b, unpriced };
    }),
  );
}
