/**
 * The SQLSTATE of a PostgreSQL error: Bun's `PostgresError` carries the server's five-character state
 * (e.g. `40001`, `57014`, `22P05`) as its `errno`. One reader for every place that tells rejections apart
 * (src/store/postgres/db.ts, src/store/postgres/flush.ts, src/accounts/shared-state-writes.ts); until
 * session 44 each read `errno` its own way.
 */

/**
 * The error's SQLSTATE (`errno` when it is five digits or capital letters, as PostgreSQL's states are), or
 * undefined: not a server error (a connection error of Bun's carries a `code`, no state), or no error at all.
 */
export function sqlState(err: unknown): string | undefined {
  const s = (err as { errno?: unknown } | null)?.errno;
  return typeof s === "string" && /^[0-9A-Z]{5}$/.test(s) ? s : undefined;
}
