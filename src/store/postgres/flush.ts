/**
 * The PostgreSQL flush (SPEC D-1, D-2): everything buffered in {@link PendingWrites} written in one
 * transaction with multi-row inserts, the trace ring trimmed; bindings and quota windows announced as
 * "state" to the other instances. One flush runs at a time; a flush asked for while one runs waits for
 * it and then writes what arrived meanwhile. A failed flush puts its rows back; while the database is
 * away nothing is attempted (the rows wait, bounded) until it returns.
 */
import type { PendingBatch, PendingWrites } from "../pending.ts";
import { errMessage, finiteOrNull, intOrNull } from "../rows.ts";
import { isUnavailable, type PgContext } from "./db.ts";

/** Rows per INSERT statement (PostgreSQL allows 65,535 parameters; usage rows have 24 columns). */
const CHUNK = 1000;

const USAGE_COLUMNS = [
  "request_id",
  "ts",
  "client_format",
  "requested_model",
  "provider_id",
  "model",
  "account_id",
  "key_name",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "estimated",
  "outcome",
  "status",
  "ttfb_ms",
  "total_ms",
  "attempts",
  "fallback",
  "cost_usd",
  "unpriced",
  "saved_chars",
  "saved_tokens",
] as const;
const ESTIMATED = USAGE_COLUMNS.indexOf("estimated");
const FALLBACK = USAGE_COLUMNS.indexOf("fallback");
const UNPRICED = USAGE_COLUMNS.indexOf("unpriced");

/** Writes the buffers; counts failures and remembers the last successful write. */
export class PgFlusher {
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors = 0;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt = 0;
  private running: Promise<void> | undefined;

  /** @param traceRingSize route traces kept (SPEC O-2) */
  constructor(
    private readonly ctx: PgContext,
    private readonly pending: PendingWrites,
    private readonly traceRingSize: number,
  ) {}

  /** Writes everything buffered now (see the module comment). Never throws. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (this.ctx.closed || this.pending.empty || !this.ctx.reachable) return;
    this.running = this.write(this.pending.take()).finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  private async write(batch: PendingBatch): Promise<void> {
    const { usage, traces, binds, quotas } = batch;
    try {
      await this.ctx.sql.begin(async (tx) => {
        for (let i = 0; i < usage.length; i += CHUNK) {
          const rows = usage.slice(i, i + CHUNK).map((p) => {
            const row: Record<string, unknown> = {};
            USAGE_COLUMNS.forEach((c, j) => {
              row[c] = j === ESTIMATED || j === FALLBACK || j === UNPRICED ? p[j] === 1 : p[j];
            });
            return row;
          });
          await tx`INSERT INTO usage ${tx(rows, ...USAGE_COLUMNS)}`;
        }
        if (traces.length) {
          // The newest trace of a route id wins (as SQLite's INSERT OR REPLACE).
          const byRoute = new Map<string, (typeof traces)[number]>();
          for (const t of traces) {
            byRoute.delete(t[0]);
            byRoute.set(t[0], t);
          }
          const all = [...byRoute.values()];
          for (let i = 0; i < all.length; i += CHUNK) {
            const rows = all.slice(i, i + CHUNK).map(([route_id, request_id, ts, body]) => ({ route_id, request_id, ts, body }));
            await tx`INSERT INTO route_traces ${tx(rows, "route_id", "request_id", "ts", "body")}
                     ON CONFLICT (route_id) DO UPDATE SET request_id = excluded.request_id, ts = excluded.ts, body = excluded.body`;
          }
          await tx`DELETE FROM route_traces WHERE seq <= (SELECT MAX(seq) FROM route_traces) - ${this.traceRingSize}`;
        }
        if (binds.size) {
          const rows = [...binds.values()].map((b) => ({ key: b.key, account_id: b.accountId, expires_at: Math.round(b.expiresAt) }));
          await tx`INSERT INTO bindings ${tx(rows, "key", "account_id", "expires_at")}
                   ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, expires_at = excluded.expires_at`;
        }
        if (quotas.size) {
          const rows = [...quotas.values()].map((q) => ({
            account_id: q.accountId,
            window: q.window,
            model: q.model,
            used_percent: finiteOrNull(q.usedPercent),
            remaining: finiteOrNull(q.remaining),
            quota_limit: finiteOrNull(q.limit),
            reset_at: intOrNull(q.resetAt),
            updated_at: Math.round(q.updatedAt),
          }));
          await tx`INSERT INTO quota_windows ${tx(rows, "account_id", "window", "model", "used_percent", "remaining", "quota_limit", "reset_at", "updated_at")}
                   ON CONFLICT (account_id, "window", model) DO UPDATE SET used_percent = excluded.used_percent,
                     remaining = excluded.remaining, quota_limit = excluded.quota_limit, reset_at = excluded.reset_at,
                     updated_at = excluded.updated_at`;
        }
      });
      this.lastFlushAt = this.ctx.now();
      if (binds.size || quotas.size) this.ctx.announce("state");
    } catch (err) {
      this.flushErrors++;
      this.pending.putBack(batch);
      if (isUnavailable(err)) this.ctx.degrade(err);
      else this.ctx.onError(`flush of ${usage.length} usage rows and ${traces.length} traces failed: ${errMessage(err)}`, err);
    }
  }
}
