/**
 * The write buffers of a store backend (SPEC D-1): usage rows, route traces, conversation bindings,
 * quota windows and client keys' changed budget windows wait here, in memory,
 * until the backend's flush writes them in one transaction. Adding is O(1), never does I/O and never
 * throws; the buffers are bounded while flushes fail. No I/O.
 */
import type { RouteTrace, UsageRecord } from "../../pipeline/ports.ts";
import { finiteOrUndefined, intOr, isShareParams, str, type TraceParams, type UsageParams, usageParams, usageRowsParams } from "./rows.ts";
import type { KeptKeyUse } from "./shared.ts";
import type { Binding, KeyBudgetRow, QuotaWindow } from "./types.ts";

/**
 * Buffered usage rows (or traces) that trigger an early flush, on the next macrotask, unless the backend
 * gives its own mark (the SQLite store does: `SQLITE_EARLY_FLUSH_AT` in ./sqlite/store.ts). A flush holds
 * the event loop for ~20 µs per row (usage + trace, measured when this was chosen): 256 rows keep that
 * pause near 5 ms, where one flush per second at 2,000–3,500 requests per second holds it for 40–70 ms.
 * The CPU per row was the same from batches of ~256 up (microbenchmark of `flush`: 21–24 µs per row at
 * 256, 512 and 3,000). The PostgreSQL store keeps this mark.
 */
export const EARLY_FLUSH_AT = 256;

/** One flush's worth of buffered writes, taken out of the buffers. */
export interface PendingBatch {
  usage: UsageParams[];
  traces: TraceParams[];
  binds: Map<string, Binding>;
  quotas: Map<string, QuotaWindow & { updatedAt: number }>;
  /** Client keys' budget windows (SPEC 9.6), one per key and window size; only while a source is set ({@link PendingWrites.pullKeyBudgets}). */
  budgets: Map<string, KeyBudgetRow>;
  /**
   * PostgreSQL only: key budget use a stop could not report, counted back by this batch
   * (src/store/postgres/count-back-key-use.ts). Never buffered here: a batch of its own made by the
   * store (`keepUnreportedUse`) or read from the unwritten file.
   */
  keyUse?: KeptKeyUse[];
}

/** The buffers, their bounds and the drop counter. */
export class PendingWrites {
  /** Usage rows as insert parameters (flat arrays of primitives until the flush). */
  private usageBuf: UsageParams[] = [];
  /** Traces as insert parameters: route id, request id, ts, the JSON body. */
  private traceBuf: TraceParams[] = [];
  private bindBuf = new Map<string, Binding>();
  private quotaBuf = new Map<string, QuotaWindow & { updatedAt: number }>();
  private budgetBuf = new Map<string, KeyBudgetRow>();
  /** Where {@link settle} takes changed budget windows from ({@link pullKeyBudgets}). */
  private budgetSource: (() => KeyBudgetRow[]) | undefined;
  /**
   * Usage rows and traces dropped (overflow, unserialisable, after close); a request written as several
   * rows (its failed attempts' own rows, ./rows.ts SPLIT) counts each of them when refused at the cap.
   */
  dropped = 0;
  /**
   * Usage rows refused at the cap (`maxPending`) since the buffers were made: the newest, while flushes
   * failed (or the database was away) and the oldest waited (counted in {@link dropped} too). A request
   * written as several rows is kept or refused whole, never cut apart (its call listed without some of
   * its attempts' cost), and counts here with all its rows. Both stores say them in their log and at
   * their stop (./refused-rows.ts).
   */
  refusedUsage = 0;
  /** Route traces refused at the cap, as {@link refusedUsage}. */
  refusedTraces = 0;
  /** Set by the store's `close`: later `record`/`save` are dropped and counted, `bind`/`setQuota` ignored. */
  closed = false;

  /**
   * @param maxPending rows buffered at most per kind while flushes fail
   * @param now ms since the epoch, for a quota window without `updatedAt`
   * @param onFull called (synchronously) when usage rows or traces reach `earlyFlushAt`
   * @param beforeFlush called by {@link settle}: hands over rows still held elsewhere (src/after-reply.ts)
   * @param earlyFlushAt usage rows (or traces) waiting that call `onFull`; default {@link EARLY_FLUSH_AT}
   */
  constructor(
    readonly maxPending: number,
    private readonly now: () => number,
    private readonly onFull: () => void,
    private readonly beforeFlush?: () => void,
    private readonly earlyFlushAt: number = EARLY_FLUSH_AT,
  ) {}

  /**
   * Called by a flush before it looks at the buffers: rows still on their way are added first (the
   * `beforeFlush` hook's usage rows, then the budget windows changed so far, so a flush that writes a
   * request's usage row writes its budget use too). Never throws.
   */
  settle(): void {
    try {
      this.beforeFlush?.();
    } catch {
      // the hook reports its own failures; a flush goes on with what is buffered
    }
    if (!this.budgetSource || this.closed) return;
    try {
      for (const r of this.budgetSource()) this.budgetBuf.set(`${r.keyName}\u0000${r.window}`, r);
    } catch {
      // a source that fails loses nothing buffered; its windows come with a later flush or at shutdown
    }
  }

  /**
   * Makes every flush take the client keys' changed budget windows from `take` (called by {@link
   * settle}; it hands over each changed window once) and write them in its transaction, coalesced per
   * key and window size (SPEC 9.6). A later call replaces the source.
   */
  pullKeyBudgets(take: () => KeyBudgetRow[]): void {
    this.budgetSource = take;
  }

  /**
   * Buffers a request's usage row, or its rows when its failed attempts' usage counted (rows.ts SPLIT:
   * its row then one per billed attempt), all of them or none: rows that would go past `maxPending`
   * are refused ({@link refusedUsage}). Never throws.
   */
  record(rec: UsageRecord): void {
    if (this.closed || !rec) {
      this.dropped++;
      return;
    }
    if (rec.split === undefined) {
      if (this.usageBuf.length >= this.maxPending) return this.refuse(1);
      this.usageBuf.push(usageParams(rec));
    } else {
      const rows = usageRowsParams(rec);
      if (this.usageBuf.length + rows.length > this.maxPending) return this.refuse(rows.length);
      for (const row of rows) this.usageBuf.push(row);
    }
    if (this.usageBuf.length >= this.earlyFlushAt) this.onFull();
  }

  /** Counts `rows` usage rows refused at the cap. */
  private refuse(rows: number): void {
    this.dropped += rows;
    this.refusedUsage += rows;
  }

  /**
   * Buffers a route trace, serialised now (the buffer holds one string per trace, not the trace's
   * object graph, for the GC to keep until the flush). A trace that cannot be serialised is dropped
   * and counted. Never throws.
   */
  save(trace: RouteTrace): void {
    if (this.closed || !trace || typeof trace.routeId !== "string") {
      this.dropped++;
      return;
    }
    if (this.traceBuf.length >= this.maxPending) {
      this.dropped++;
      this.refusedTraces++;
      return;
    }
    let body: string;
    try {
      body = JSON.stringify(trace);
    } catch {
      this.dropped++;
      return;
    }
    this.traceBuf.push([trace.routeId, str(trace.requestId) ?? "", intOr(trace.ts, 0), body]);
    if (this.traceBuf.length >= this.earlyFlushAt) this.onFull();
  }

  /** Buffers a quota window, coalesced per account/window/model. Never throws. */
  setQuota(q: QuotaWindow): void {
    if (this.closed || !q || typeof q.accountId !== "string" || typeof q.window !== "string") return;
    const model = typeof q.model === "string" && q.model ? q.model : "*";
    const updatedAt = finiteOrUndefined(q.updatedAt) ?? this.now();
    this.quotaBuf.set(`${q.accountId}\u0000${q.window}\u0000${model}`, { ...q, model, updatedAt });
  }

  /**
   * Buffers a binding, coalesced per key. Never throws. The record is kept as given, not copied: the
   * caller hands over one it does not change afterwards (the registry's, made per success by
   * src/accounts/bindings.ts `set`; a copy here was a second object per request, docs/performance.md
   * item 252).
   */
  bind(b: Binding): void {
    if (this.closed || !b || typeof b.key !== "string" || typeof b.accountId !== "string") return;
    if (!Number.isFinite(b.expiresAt)) return;
    this.bindBuf.set(b.key, b);
  }

  /** Forgets a pending binding. */
  unbind(key: string): void {
    this.bindBuf.delete(key);
  }

  /** Forgets the pending quota windows of an account (its API key was replaced). */
  forgetQuotas(accountId: string): void {
    for (const [k, q] of this.quotaBuf) if (q.accountId === accountId) this.quotaBuf.delete(k);
  }

  /** Forgets the pending bindings and quota windows of an account (it is being deleted). */
  forgetAccount(accountId: string): void {
    for (const [k, b] of this.bindBuf) if (b.accountId === accountId) this.bindBuf.delete(k);
    for (const [k, q] of this.quotaBuf) if (q.accountId === accountId) this.quotaBuf.delete(k);
  }

  /** Whether anything waits. */
  get empty(): boolean {
    return !this.usageBuf.length && !this.traceBuf.length && !this.bindBuf.size && !this.quotaBuf.size && !this.budgetBuf.size;
  }

  /** Usage rows waiting. */
  get pendingUsage(): number {
    return this.usageBuf.length;
  }

  /** Traces waiting. */
  get pendingTraces(): number {
    return this.traceBuf.length;
  }

  /** Bindings, quota windows and budget windows waiting. */
  get pendingState(): number {
    return this.bindBuf.size + this.quotaBuf.size + this.budgetBuf.size;
  }

  /** Takes everything out of the buffers for one flush. */
  take(): PendingBatch {
    const batch = { usage: this.usageBuf, traces: this.traceBuf, binds: this.bindBuf, quotas: this.quotaBuf, budgets: this.budgetBuf };
    this.usageBuf = [];
    this.traceBuf = [];
    this.bindBuf = new Map();
    this.quotaBuf = new Map();
    this.budgetBuf = new Map();
    return batch;
  }

  /**
   * Puts a failed flush's batch back in front of whatever was buffered since (older rows first;
   * bindings, quota and budget windows buffered since win), bounded by `maxPending`; the overflow (the
   * newest) is dropped and counted, as refused ({@link refusedUsage}, {@link refusedTraces}). A request's
   * rows are kept or dropped together: the cut never falls between a request's row and its attempts' rows.
   */
  putBack(batch: PendingBatch): void {
    const usage = this.usageBuf.length ? batch.usage.concat(this.usageBuf) : batch.usage;
    const traces = this.traceBuf.length ? batch.traces.concat(this.traceBuf) : batch.traces;
    this.usageBuf = usage.length > this.maxPending ? usage.slice(0, keptWhole(usage, this.maxPending)) : usage;
    this.dropped += usage.length - this.usageBuf.length;
    this.refusedUsage += usage.length - this.usageBuf.length;
    this.traceBuf = traces.length > this.maxPending ? traces.slice(0, this.maxPending) : traces;
    this.dropped += traces.length - this.traceBuf.length;
    this.refusedTraces += traces.length - this.traceBuf.length;
    for (const [k, b] of this.bindBuf) batch.binds.set(k, b);
    for (const [k, q] of this.quotaBuf) batch.quotas.set(k, q);
    this.bindBuf = batch.binds;
    this.quotaBuf = batch.quotas;
    if (batch.budgets.size) {
      for (const [k, r] of this.budgetBuf) batch.budgets.set(k, r);
      this.budgetBuf = batch.budgets;
    }
  }

  /** Drops everything still buffered (at close, after the last flush), counting rows and traces. */
  discard(): void {
    this.dropped += this.usageBuf.length + this.traceBuf.length;
    this.usageBuf = [];
    this.traceBuf = [];
    this.bindBuf.clear();
    this.quotaBuf.clear();
    this.budgetBuf.clear();
  }
}

/**
 * How many of `usage`'s first rows to keep within `max` (< `usage.length`) without cutting a request
 * apart: `max`, or less so that the first row dropped is not a failed attempt's own row (rows.ts
 * `isShareParams`) whose request's row would be kept.
 */
function keptWhole(usage: readonly UsageParams[], max: number): number {
  let cut = max;
  while (cut > 0 && isShareParams(usage[cut]!)) cut--;
  // usage[cut] is now the request's own row (or a whole one): it and its attempts' rows are dropped
  return cut;
}
