/**
 * Value conversions for rows read through Bun's SQL client: PostgreSQL BIGINT and NUMERIC arrive as
 * strings (they may exceed 2^53); switchyard's values (ms timestamps, token counts) fit a double.
 */

/** A BIGINT/NUMERIC column as a number (0 for null). */
export function num(v: unknown): number {
  return v === null || v === undefined ? 0 : Number(v);
}

/** A nullable BIGINT/NUMERIC column as a number or null. */
export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

/** ms since the epoch by the database's clock, as SQL (leases and counters agree across instances). */
export const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
