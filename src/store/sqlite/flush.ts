/**
 * The SQLite flush (SPEC D-1): everything buffered in {@link PendingWrites} (usage rows, route traces,
 * bindings, quota windows) written in ONE IMMEDIATE transaction, the trace ring trimmed to its size.
 * A failed flush puts its rows back for the next one and reports to `onError`; it never throws.
 */
import type { PendingWrites } from "../pending.ts";
import { errMessage, finiteOrNull, intOrNull } from "../rows.ts";
import type { SqliteContext } from "./db.ts";

/** Writes the buffers; counts failures and remembers the last successful write. */
export class SqliteFlusher {
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors = 0;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt = 0;
  private readonly s;

  /** Prepares the insert statements. @param traceRingSize route traces kept (SPEC O-2) */
  constructor(
    private readonly ctx: SqliteContext,
    private readonly pending: PendingWrites,
    private readonly traceRingSize: number,
  ) {
    const db = ctx.db;
    this.s = {
      usageInsert: db.prepare(
        `INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, account_id, key_name,
           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, outcome,
           status, ttfb_ms, total_ms, attempts, fallback, cost_usd, unpriced, saved_chars, saved_tokens)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      traceInsert: db.prepare(
        "INSERT OR REPLACE INTO route_traces (route_id, request_id, ts, body) VALUES (?, ?, ?, ?)",
      ),
      traceTrim: db.prepare("DELETE FROM route_traces WHERE seq <= (SELECT MAX(seq) FROM route_traces) - ?"),
      quotaSet: db.prepare(
        `INSERT INTO quota_windows (account_id, window, model, used_percent, remaining, quota_limit, reset_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, window, model) DO UPDATE SET used_percent = excluded.used_percent,
           remaining = excluded.remaining, quota_limit = excluded.quota_limit, reset_at = excluded.reset_at,
           updated_at = excluded.updated_at`,
      ),
      bindSet: db.prepare(
        `INSERT INTO bindings (key, account_id, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, expires_at = excluded.expires_at`,
      ),
    };
  }

  /**
   * Writes every buffered usage row, trace, binding and quota window in one IMMEDIATE transaction and
   * trims the trace ring. On failure the rows stay buffered for the next attempt and the error goes to
   * `onError`; nothing is thrown. No-op once closed.
   */
  flush(): void {
    if (this.ctx.closed) return;
    if (this.pending.empty) return;
    const batch = this.pending.take();
    const { usage, traces, binds, quotas } = batch;
    try {
      this.ctx.db
        .transaction(() => {
          const ins = this.s.usageInsert;
          for (const r of usage) ins.run(...r);
          if (traces.length) {
            const tins = this.s.traceInsert;
            for (const row of traces) tins.run(...row);
            this.s.traceTrim.run(this.traceRingSize);
          }
          for (const b of binds.values()) this.s.bindSet.run(b.key, b.accountId, Math.round(b.expiresAt));
          for (const q of quotas.values()) {
            this.s.quotaSet.run(
              q.accountId,
              q.window,
              q.model,
              finiteOrNull(q.usedPercent),
              finiteOrNull(q.remaining),
              finiteOrNull(q.limit),
              intOrNull(q.resetAt),
              Math.round(q.updatedAt),
            );
          }
        })
        .immediate();
      this.lastFlushAt = this.ctx.now();
    } catch (err) {
      this.flushErrors++;
      this.pending.putBack(batch);
      this.ctx.onError(`flush of ${usage.length} usage rows and ${traces.length} traces failed: ${errMessage(err)}`, err);
    }
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of Object.values(this.s)) stmt.finalize();
  }
}
