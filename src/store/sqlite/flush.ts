/**
 * The SQLite flush (SPEC D-1): everything buffered in {@link PendingWrites} (usage rows, route traces,
 * bindings, quota windows, client keys' changed budget windows) written in ONE IMMEDIATE transaction;
 * traces go into the ring as one compressed block per flush (./trace-ring.ts). A budget window is written with the
 * usage rows of the requests that spent it, so a kill -9 loses no more budget use than usage rows.
 * A failed flush puts its rows back for the next one; the first of a run of failures is reported to
 * `onError` (`database writes failing`), the flush that works again to `onInfo` (`database writes work
 * again`); it never throws. Rows the buffers refused at their cap meanwhile (the newest, lost) are said
 * to `onRefused`: by the first failed flush after the first refusal, again at most once a minute while
 * their count grows, and in the line of the flush that works again (then to `onRefused`, not `onInfo`).
 */
import type { PendingWrites } from "../pending.ts";
import { num, type RefusedLine, RefusedRows } from "../refused-rows.ts";
import { errMessage, quotaParams, type TraceParams, type UsageParams } from "../rows.ts";
import type { SqliteContext } from "./db.ts";
import { BUDGET_UPSERT, budgetParams } from "./keys.ts";
import { BLOCK_MAX, encodeBlock } from "./trace-ring.ts";

/** Writes the buffers; counts failures and remembers the last successful write. */
export class SqliteFlusher {
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors = 0;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt = 0;
  /**
   * Whether the last flush failed (a full disk, a file made read-only): set by a failed flush, cleared by
   * the next one that writes. The store reads it as unhealthy (`SqliteStore.writesFailing`).
   */
  failing = false;
  /** Flushes that failed since {@link failing} was set (said in the line of the flush that works again). */
  private failedInRow = 0;
  /** The lines of rows refused at the buffers' cap (../refused-rows.ts). */
  private readonly refused: RefusedRows;
  private readonly s;
  private readonly ring;

  /**
   * Prepares the insert statements. @param traceRingSize route traces kept (SPEC O-2; at least 1), read
   * at each flush: a configuration change sets it (SqliteStore.setTraceRingSize)
   */
  constructor(
    private readonly ctx: SqliteContext,
    private readonly pending: PendingWrites,
    public traceRingSize: number,
    private readonly onInfo: (message: string) => void = () => {},
    onRefused: RefusedLine = () => {},
  ) {
    this.refused = new RefusedRows(pending, ctx.now, onRefused);
    const db = ctx.db;
    this.s = {
      usageInsert: db.prepare(
        `INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, account_id, key_name,
           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, outcome,
           status, ttfb_ms, total_ms, attempts, fallback, cost_usd, unpriced, saved_chars, saved_tokens, rate_limited,
           instance, instance_id, transport, web_searches, split)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      quotaSet: db.prepare(
        `INSERT INTO quota_windows (account_id, window, model, used_percent, remaining, quota_limit, reset_at, updated_at, credential)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, window, model) DO UPDATE SET used_percent = excluded.used_percent,
           remaining = excluded.remaining, quota_limit = excluded.quota_limit, reset_at = excluded.reset_at,
           updated_at = excluded.updated_at, credential = excluded.credential`,
      ),
      budgetSet: db.prepare(BUDGET_UPSERT),
      bindSet: db.prepare(
        `INSERT INTO bindings (key, account_id, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, expires_at = excluded.expires_at`,
      ),
    };
    this.ring = {
      insert: db.prepare("INSERT INTO trace_blocks (n, min_route, max_route, min_request, max_request, body) VALUES (?, ?, ?, ?, ?, ?)"),
      sizes: db.prepare("SELECT seq, n FROM trace_blocks ORDER BY seq"),
      remove: db.prepare("DELETE FROM trace_blocks WHERE seq = ?"),
    };
  }

  /**
   * Writes traces as blocks of at most {@link BLOCK_MAX} (./trace-ring.ts), then deletes the oldest
   * blocks while the others hold at least the ring's size. Inside the flush's transaction; the sizes
   * are read from the table each time, so another connection's writes are seen.
   */
  private writeTraces(traces: readonly TraceParams[]): void {
    const { insert, sizes, remove } = this.ring;
    for (let i = 0; i < traces.length; i += BLOCK_MAX) {
      const b = encodeBlock(i === 0 && traces.length <= BLOCK_MAX ? traces : traces.slice(i, i + BLOCK_MAX));
      insert.run(b.n, b.minRoute, b.maxRoute, b.minRequest, b.maxRequest, b.body);
    }
    const blocks = sizes.all() as { seq: number; n: number }[];
    let kept = 0;
    for (const b of blocks) kept += b.n;
    for (const b of blocks) {
      if (kept - b.n < this.traceRingSize) break;
      remove.run(b.seq);
      kept -= b.n;
    }
  }

  /**
   * Writes every buffered usage row, trace, binding, quota and budget window in one IMMEDIATE transaction and
   * trims the trace ring. On failure the rows stay buffered for the next attempt and the error goes to
   * `onError`; nothing is thrown. No-op once closed.
   */
  flush(): void {
    if (this.ctx.closed) return;
    this.pending.settle();
    if (this.pending.empty) return;
    const batch = this.pending.take();
    const { usage, traces, binds, quotas, budgets } = batch;
    try {
      this.ctx.db
        .transaction(() => {
          // A row's parameters handed over as the array they are (bun:sqlite binds an array argument
          // positionally, as `Database.run(sql, [..])` does), not spread into 24 arguments that its
          // `run(...args)` gathers into a new array again (docs/performance.md item 106).
          const ins = this.s.usageInsert as unknown as { run(params: UsageParams): unknown };
          for (const r of usage) ins.run(r);
          if (traces.length) this.writeTraces(traces);
          for (const b of binds.values()) this.s.bindSet.run(b.key, b.accountId, Math.round(b.expiresAt));
          for (const q of quotas.values()) this.s.quotaSet.run(...quotaParams(q));
          for (const r of budgets.values()) this.s.budgetSet.run(...budgetParams(r));
        })
        .immediate();
      this.lastFlushAt = this.ctx.now();
      if (this.failing) {
        this.failing = false;
        const again = `database writes work again: ${num(usage.length)} usage rows and ${num(traces.length)} route traces written after ${this.failedInRow} failed flushes`;
        if (!this.refused.again(again)) this.onInfo(again);
        this.failedInRow = 0;
      } else this.refused.wrote();
    } catch (err) {
      this.flushErrors++;
      this.failedInRow++;
      this.pending.putBack(batch);
      // Said once per outage (a full disk fails every flush, about once a second): the next line is the
      // one of the flush that works again; the failures are counted in store_flush_errors_total.
      if (!this.failing) {
        this.failing = true;
        this.ctx.onError(`database writes failing (${errMessage(err)}): ${usage.length} usage rows and ${traces.length} route traces wait in memory and are written once a write works again; /health says db "failing" until then, and a stop loses what is still unwritten`, err);
      }
      this.refused.failed("database writes failing");
    }
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of Object.values(this.s)) stmt.finalize();
    for (const stmt of Object.values(this.ring)) stmt.finalize();
  }
}
