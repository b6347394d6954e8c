/**
 * Counts back the key budget use a stop could not report while PostgreSQL was away (SPEC 9.6 with D-2;
 * README "Running several instances"): `SharedKeyCounters.close` hands it to the store
 * (`SharedStore.keepUnreportedUse`), which writes it with its last flush or keeps it in
 * unwritten-rows.jsonl (./keep-unwritten.ts) for the next start's flush. Each entry is one instance's
 * whole use of one budget window (a total, as its reports say it), so it is written as that instance's
 * row of the pool in `quota_shares`, the row its reports would have updated: its use there only grows
 * (the larger of the row's and the kept figure), and every instance then counts it in the window.
 *
 * Only into the budget's current window: a kept window still open on the database's clock is proposed
 * as the budget's window when none is open (as the stopping instance would have when the database
 * answered: `SharedStore.openBudgetWindow` with its start), and its use is counted when the current
 * window is that one (same start), or, for a window the stopping instance had opened while the
 * database was away and never had confirmed, whichever window is open now (the live instance moves
 * such a share to the database's window: src/limits/track-budget-windows.ts `adopt`). A window that has
 * ended is dropped (counted by the caller: kept minus counted).
 *
 * Written once: the statement first inserts its batch id into `flush_batches` (as ./flush.ts does for
 * rows) and writes only when that id is new; the entries being totals, a replay would not add twice
 * anyway. No pool lock is taken: the use was spent already, and the pool may end over its limit by it,
 * as with an instance that counted alone during an outage.
 */
import type { SQL } from "bun";
import type { KeptKeyUse } from "../shared.ts";
import { pgJson } from "./flush.ts";
import { DB_NOW_MS } from "./values.ts";

/**
 * The statement: $1 the batch id, $2 a JSON array of `[pool name, window start, window end, pending
 * (1/0), used, unpriced or null, instance id]`. Returns `fresh` (the id was new) and `counted` (the
 * entries written into a current window).
 */
const COUNT_BACK = `WITH
  f AS (
    INSERT INTO flush_batches (id, at) VALUES ($1, ${DB_NOW_MS}) ON CONFLICT (id) DO NOTHING RETURNING 1),
  n AS (SELECT ${DB_NOW_MS} AS now),
  v AS (
    SELECT r->>0 AS name, (r->>1)::bigint AS ws, (r->>2)::bigint AS we, (r->>3)::int = 1 AS pending,
      (r->>4)::float8 AS used, (r->>5)::bigint AS unpriced, r->>6 AS inst
    FROM json_array_elements($2::text::json) AS r WHERE EXISTS (SELECT 1 FROM f)),
  live AS (
    SELECT DISTINCT ON (v.name, v.inst) v.* FROM v, n WHERE v.ws <= n.now AND v.we > n.now ORDER BY v.name, v.inst, v.ws DESC),
  opened AS (
    INSERT INTO budget_window_starts AS w (name, window_start, window_end)
      SELECT DISTINCT ON (name) name, ws, we FROM live ORDER BY name, ws DESC
    ON CONFLICT (name) DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end
      WHERE w.window_end <= (SELECT now FROM n)
    RETURNING w.name, w.window_start, w.window_end),
  cur AS (
    SELECT name, window_start, window_end FROM opened
    UNION ALL
    SELECT b.name, b.window_start, b.window_end FROM budget_window_starts b, n
      WHERE b.name IN (SELECT name FROM live) AND b.window_end > n.now AND b.name NOT IN (SELECT name FROM opened)),
  counted AS (
    INSERT INTO quota_shares AS q (name, window_start, instance_id, granted, used, window_end, expires_at, unpriced)
      SELECT live.name, cur.window_start, live.inst, live.used, live.used, cur.window_end, (SELECT now FROM n), COALESCE(live.unpriced, 0)
      FROM live JOIN cur ON cur.name = live.name
      WHERE cur.window_start = live.ws OR live.pending
    ON CONFLICT (name, window_start, instance_id) DO UPDATE SET
      used = GREATEST(q.used, excluded.used), granted = GREATEST(q.granted, excluded.used),
      unpriced = GREATEST(q.unpriced, excluded.unpriced), expires_at = LEAST(q.expires_at, excluded.expires_at)
    RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM f) AS fresh, (SELECT count(*) FROM counted)::int AS counted`;

/** What {@link countBackKeyUse} did: whether its batch id was new, and how many entries it counted into a current window. */
export interface CountedBack {
  fresh: boolean;
  counted: number;
}

/**
 * Writes `uses` (one batch, id `id`) into their budgets' current windows, once (module comment): one
 * statement. @throws the client's error (the caller tells a lost connection from a refusal)
 */
export async function countBackKeyUse(sql: Pick<SQL, "unsafe">, id: string, uses: readonly KeptKeyUse[]): Promise<CountedBack> {
  const n = (v: number) => (Number.isFinite(v) ? Math.max(0, v) : 0);
  const rows = uses.map((u) => [u.name, Math.floor(u.windowStart), Math.floor(u.windowEnd), u.pending ? 1 : 0, n(u.used), u.unpriced !== undefined && Number.isFinite(u.unpriced) ? Math.max(0, Math.round(u.unpriced)) : null, u.instanceId]);
  const [row] = await sql.unsafe(COUNT_BACK, [id, pgJson(rows)]);
  return { fresh: row?.fresh === true, counted: Number(row?.counted ?? 0) };
}
