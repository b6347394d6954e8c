/**
 * The SQLite route-trace ring (SPEC O-2) as generation tables: `route_traces` and `route_traces_1` …
 * `route_traces_4` (migration 7), each holding one block of ceil(N / 4) traces in `seq` order. Traces go
 * into the newest table (the one holding the largest `seq`); when it holds a block, the oldest table is
 * emptied whole and becomes the newest. A whole-table DELETE frees pages without visiting rows
 * (SQLite's truncate optimisation), where trimming the oldest rows one by one removed each row and its
 * two index entries: 4.6–4.9 against 7.0–7.5 µs of CPU per trace written (docs/performance.md, item 50).
 * So the ring keeps at least the newest N traces (the four tables besides the newest hold a block each)
 * and at most 5 × ceil(N / 4) of them: 12,500 for the default 10,000. Every trace kept is visible to the
 * queries. No I/O here: SQL text only.
 */

/** The generation tables, in rotation order. */
export const TRACE_TABLES = ["route_traces", "route_traces_1", "route_traces_2", "route_traces_3", "route_traces_4"] as const;

/** Traces per generation table for a ring of `ringSize` (≥ 1): the other four tables hold ≥ ringSize. */
export function traceBlock(ringSize: number): number {
  return Math.max(1, Math.ceil(ringSize / (TRACE_TABLES.length - 1)));
}

/**
 * One SELECT over every generation table: `arm(table)` is the SELECT for one table (the same columns in
 * each); the arms are joined with UNION ALL.
 */
export function overTraceTables(arm: (table: string) => string): string {
  return TRACE_TABLES.map(arm).join(" UNION ALL ");
}
