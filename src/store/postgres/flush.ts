/**
 * The PostgreSQL flush (SPEC D-1, D-2): everything buffered in {@link PendingWrites} written by one
 * statement (one transaction of several for a backlog over 1,000 rows), the trace ring trimmed; bindings and quota windows announced as
 * "state" to the other instances. One flush runs at a time; a flush asked for while one runs waits for
 * it and then writes what arrived meanwhile. A flush the database rejected puts its rows back; while
 * the database is away nothing is attempted (the rows wait, bounded) until it returns.
 *
 * A stalled database (a table lock, a network partition, a full pool: connections open, no answer) is
 * away too: a flush unanswered after {@link FLUSH_ANSWER_MS} (per 1,000 rows of a backlog) enters
 * degraded mode like a lost connection. Such a flush, or one whose connection broke, may still commit:
 * its batch is kept whole with its id and replayed with the same id, first by the outage probe before
 * the database counts as back ({@link PgFlusher.probeWrites}). Each statement first inserts its id into
 * `flush_batches` (ON CONFLICT DO NOTHING) and writes its rows only when that inserted a row, so a
 * batch is written once: a replay after the first statement committed writes nothing, and one that
 * runs while the first still waits for the lock waits on the id's row and then writes nothing too.
 * The row-by-row retry after a refused value (`writeOneByOne`) does the same per row: each statement
 * has the answer bound and an id derived from the batch's, and an unanswered one is kept and replayed.
 * What a stop could not write is kept on disk with the same ids (./keep-unwritten.ts) and written by
 * the next start before its own rows ({@link PgFlusher.writeDiskFirst}). The key budget use a stop
 * could not report travels in batches of its own (`PendingBatch.keyUse`, queued by {@link
 * PgFlusher.queue}), written by ./count-back-key-use.ts under the same kind of id.
 *
 * Rows the buffers refused at their cap meanwhile (the newest, lost) are said as the embedded store's
 * (../refused-rows.ts): by the first flush not tried while the database is away (or rejected) after the
 * first refusal, again at most once a minute while their count grows, and in the `database reachable
 * again` line (PostgresStore puts them there: a `warn` line then, not `info`). A flush with batches to
 * write ahead of the buffers (the kept one, a previous stop's, queued key use) takes the buffers' rows
 * first, queued behind those, so that the first flush after an outage gives the buffers room at once:
 * the rows recorded while it writes the batches ahead wait rather than being refused.
 */
import type { PendingBatch, PendingWrites } from "../pending.ts";
import { type RefusedLine, RefusedRows, refusedOnStderr } from "../refused-rows.ts";
import { errMessage, quotaParams } from "../rows.ts";
import { answerWithin } from "../shared.ts";
import { sqlState } from "../sql-state.ts";
import { StoreError } from "../types.ts";
import { isUnavailable, type PgContext } from "./db.ts";
import { countBackKeyUse } from "./count-back-key-use.ts";
import { FlushFailures } from "./flush-failures.ts";
import { countRows, emptyBatch, holdsAny, type IdentifiedBatch, type RowCounts } from "./keep-unwritten.ts";
import { DB_NOW_MS } from "./values.ts";

/** Usage rows (and traces) per statement: bounds one statement's JSON parameters. */
const CHUNK = 1000;

/**
 * How long a flush statement may go unanswered before the database counts as away (degraded mode), ms;
 * a backlog's transaction gets this per statement of 1,000 rows. The same bound as a request's wait
 * for the shared store (SHARED_ANSWER_MS).
 */
export const FLUSH_ANSWER_MS = 10_000;

/** Batch ids in `flush_batches` are kept this long (a kept batch is replayed within it), ms. */
const BATCH_ID_KEEP_MS = 7 * 24 * 3600_000;
/** How often an instance prunes `flush_batches`, ms. */
const BATCH_ID_PRUNE_MS = 600_000;

/**
 * One flush statement: usage rows, route traces (then the ring trimmed), bindings and quota windows,
 * each from a JSON array parameter of positional rows ($1 usage rows in the order of `usageParams` in
 * ../rows.ts, the last, `split`, absent from the rows an earlier version kept in its unwritten file; $2 `[route_id, request_id, ts, body]`; $3 `[key, account_id, expires_at]`; $4 quota
 * windows; $5 the trace ring's size), written only when $6, the statement's batch id, is new in
 * `flush_batches` (see the module comment; it returns `fresh`: whether it was). The client serialises each batch with one native
 * `JSON.stringify` and sends one statement: no object per row, no bound parameter per cell, no
 * BEGIN/COMMIT round trips (one statement is atomic). Measured in process on the loaded 2-core machine,
 * 256 rows per flush: 29.6–33.6 µs of CPU per usage row + trace, against 38.7–44.4 µs with Bun's
 * multi-row insert helper in a transaction of five statements.
 * A statement's upserts may touch a row once: traces are one per route id, bindings and quota windows
 * are one per key in their buffers.
 */
const FLUSH = `WITH
  f AS (
    INSERT INTO flush_batches (id, at) VALUES ($6, ${DB_NOW_MS}) ON CONFLICT (id) DO NOTHING RETURNING 1),
  u AS (
    INSERT INTO usage (request_id, ts, client_format, requested_model, provider_id, model, account_id, key_name,
      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, outcome, status,
      ttfb_ms, total_ms, attempts, fallback, cost_usd, unpriced, saved_chars, saved_tokens, rate_limited,
      instance, instance_id, transport, web_searches, split)
    SELECT r->>0, (r->>1)::bigint, r->>2, r->>3, r->>4, r->>5, r->>6, r->>7, (r->>8)::bigint, (r->>9)::bigint,
      (r->>10)::bigint, (r->>11)::bigint, (r->>12)::bigint, (r->>13)::int = 1, r->>14, (r->>15)::int, (r->>16)::bigint,
      (r->>17)::bigint, (r->>18)::int, (r->>19)::int = 1, (r->>20)::float8, (r->>21)::int = 1, (r->>22)::bigint,
      (r->>23)::bigint, r->>24, r->>25, r->>26, r->>27, (r->>28)::bigint, COALESCE((r->>29)::smallint, 0)
    FROM json_array_elements($1::text::json) AS r WHERE EXISTS (SELECT 1 FROM f)),
  t AS (
    INSERT INTO route_traces (route_id, request_id, ts, body)
    SELECT r->>0, r->>1, (r->>2)::bigint, r->>3 FROM json_array_elements($2::text::json) AS r WHERE EXISTS (SELECT 1 FROM f)
    ON CONFLICT (route_id) DO UPDATE SET request_id = excluded.request_id, ts = excluded.ts, body = excluded.body
    RETURNING seq),
  trimmed AS (
    DELETE FROM route_traces WHERE seq <= (SELECT MAX(seq) FROM t) - $5::bigint),
  b AS (
    INSERT INTO bindings (key, account_id, expires_at)
    SELECT r->>0, r->>1, (r->>2)::bigint FROM json_array_elements($3::text::json) AS r WHERE EXISTS (SELECT 1 FROM f)
    ON CONFLICT (key) DO UPDATE SET account_id = excluded.account_id, expires_at = excluded.expires_at),
  q AS (
    INSERT INTO quota_windows (account_id, "window", model, used_percent, remaining, quota_limit, reset_at, updated_at, credential)
    SELECT r->>0, r->>1, r->>2, (r->>3)::float8, (r->>4)::float8, (r->>5)::float8, (r->>6)::bigint, (r->>7)::bigint, r->>8
    FROM json_array_elements($4::text::json) AS r WHERE EXISTS (SELECT 1 FROM f)
    ON CONFLICT (account_id, "window", model) DO UPDATE SET used_percent = excluded.used_percent,
      remaining = excluded.remaining, quota_limit = excluded.quota_limit, reset_at = excluded.reset_at,
      updated_at = excluded.updated_at, credential = excluded.credential)
  SELECT EXISTS (SELECT 1 FROM f) AS fresh`;

/** A JSON string escape PostgreSQL's `text` cannot hold: NUL, or a lone UTF-16 surrogate. */
const TEXT_UNSAFE = /\\u(?:0000|d[89a-f][0-9a-f]{2})/i;
/** The same, with the run of backslashes before it (an even run is an escaped backslash, not an escape). */
const TEXT_UNSAFE_ALL = /(\\+)u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * `JSON.stringify(v)` whose strings PostgreSQL can turn into `text`: a NUL character (`\u0000`, which
 * `text` cannot hold: SQLSTATE 22P05) and a lone surrogate (which `json` rejects: 22P02) become U+FFFD,
 * the Unicode replacement character. Both can arrive from a client (a model name, say); written as they
 * were, they made PostgreSQL reject the whole flush, again at every retry, so no usage row or trace of
 * that instance reached the database any more. `JSON.stringify` escapes exactly those characters (paired
 * surrogates are written as they are), so a scan for the escape finds them; the common case is one scan.
 */
export function pgJson(v: unknown): string {
  const json = JSON.stringify(v);
  if (!TEXT_UNSAFE.test(json)) return json;
  return json.replace(TEXT_UNSAFE_ALL, (m, slashes: string) => (slashes.length % 2 === 1 ? `${slashes}ufffd` : m));
}

/** Whether PostgreSQL rejected a statement for a value in it (SQLSTATE class 22, data exception). */
function isDataError(err: unknown): boolean {
  return sqlState(err)?.startsWith("22") ?? false;
}

/** What the key budget use of a disk file's batches came to: windows counted back, and dropped (their windows had ended). */
export interface KeyUseOutcome {
  counted: number;
  dropped: number;
}

/** Writes the buffers; counts failures and remembers the last successful write. */
export class PgFlusher {
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors = 0;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt = 0;
  /** Kept batches replayed whose first statement had committed (the replay wrote nothing). */
  replayedWritten = 0;
  private running: Promise<void> | undefined;
  /** The batch whose statement was sent and has not answered yet (nor timed out), with its id. */
  private sending: IdentifiedBatch | undefined;
  /** The batch whose flush got no answer or lost its connection: replayed with its id (module comment). */
  private unsure: { id: string; batch: PendingBatch } | undefined;
  /** The probe's replay of {@link unsure} while unanswered (no second one is sent meanwhile). */
  private replaying: Promise<unknown> | undefined;
  private lastPrune = 0;
  /** Batches a previous stop kept on disk (./keep-unwritten.ts), written before the buffers, each with its id. */
  private fromDisk: IdentifiedBatch[] = [];
  /** Their ids, and the file they came from (removed once they are written): see {@link writeDiskFirst}. */
  private diskIds = new Set<string>();
  private diskFile: { path: string; rows: RowCounts; keyUse: KeyUseOutcome; done: (path: string, rows: RowCounts, keyUse: KeyUseOutcome) => void } | undefined;
  /**
   * Batches written after the disk's, before the buffers: key budget use handed over at a stop ({@link
   * queue}), and the buffers' rows a flush took before writing the batches ahead of them ({@link flush}).
   */
  private queued: IdentifiedBatch[] = [];
  /** The lines of rows refused at the buffers' cap (../refused-rows.ts); the store says an outage's in its end's line. */
  readonly refused: RefusedRows;
  /** The lines of a run of flushes the database answers but refuses (./flush-failures.ts). */
  private readonly failures: FlushFailures;

  /**
   * @param traceRingSize route traces kept (SPEC O-2; at least 1), read at each flush: a configuration
   *   change sets it (PostgresStore.setTraceRingSize)
   * @param answerMs how long a flush statement may go unanswered, ms ({@link FLUSH_ANSWER_MS})
   * @param onRefused receives the lines of rows refused at the buffers' cap (default: stderr)
   */
  constructor(
    private readonly ctx: PgContext,
    private readonly pending: PendingWrites,
    public traceRingSize: number,
    private readonly answerMs: number = FLUSH_ANSWER_MS,
    onRefused: RefusedLine = refusedOnStderr,
  ) {
    this.refused = new RefusedRows(pending, ctx.now, onRefused);
    this.failures = new FlushFailures(ctx.now, (message, err) => ctx.onError(message, err));
    ctx.onProbe(() => this.probeWrites());
  }

  /** Usage rows of the kept batch (awaiting its replay). */
  get keptRows(): number {
    return this.unsure ? this.unsure.batch.usage.length : 0;
  }

  /** The kept batch's usage rows, traces, state rows (bindings, quota windows) and key budget use, zeros when none. */
  get kept(): RowCounts {
    const inAir = this.inAir;
    return countRows(inAir ? [inAir] : []);
  }

  /** Makes the next flushes write `b` (key budget use a stop could not report, with a new id) after the disk's batches. */
  queue(b: IdentifiedBatch): void {
    this.queued.push(b);
  }

  /** The queued batches not written yet ({@link queue}); they are no longer written after this. */
  detachQueued(): IdentifiedBatch[] {
    const left = this.queued;
    this.queued = [];
    return left;
  }

  /** What the queued batches hold (key budget use, and rows taken from the buffers by a flush under way). */
  get queuedRows(): RowCounts {
    return countRows(this.queued);
  }

  /**
   * The batch kept for its replay (no answer, or its connection broke), with its id, else the batch of a
   * flush waiting for its answer now (a stop that cannot wait longer keeps it with its id: written once
   * whether or not that statement commits later); undefined when none.
   */
  get inAir(): IdentifiedBatch | undefined {
    return this.unsure ?? this.sending;
  }

  /** Whether a flush waits for its statement's answer now. */
  get waiting(): boolean {
    return this.sending !== undefined;
  }

  /**
   * Makes the next flushes write `batches` (a previous stop's, read from `path`) before the buffers, each
   * with its own flush id, so one that was written already writes nothing. Once all are written (a
   * replay that got no answer is kept like any other), `done` is called with `path`, what was
   * written and what its key budget use came to (a batch written already by an earlier start counts in
   * neither), after which the caller removes the file. A database away meanwhile leaves them waiting.
   */
  writeDiskFirst(path: string, batches: IdentifiedBatch[], done: (path: string, rows: RowCounts, keyUse: KeyUseOutcome) => void): void {
    this.fromDisk = [...batches];
    this.diskIds = new Set(batches.map((b) => b.id));
    this.diskFile = { path, rows: countRows(batches), keyUse: { counted: 0, dropped: 0 }, done };
  }

  /** The disk batches not written yet (the one in the air among them stays {@link inAir}); no more of them are written or their file removed after this. */
  detachDisk(): IdentifiedBatch[] {
    const left = this.fromDisk;
    this.fromDisk = [];
    this.diskFile = undefined;
    return left;
  }

  /** The rows of the disk batches not yet sent (./keep-unwritten.ts). */
  get diskRows(): RowCounts {
    return countRows(this.fromDisk);
  }

  /** Whether batches from disk wait to be written. */
  get diskWaiting(): boolean {
    return this.diskFile !== undefined;
  }

  /** Whether the batch of flush id `id` is (a part of) one read from disk by {@link writeDiskFirst}. */
  cameFromDisk(id: string): boolean {
    return [...this.diskIds].some((d) => id === d || id.startsWith(`${d}/`));
  }

  /** Calls the disk file's `done` once none of its batches waits, neither queued nor in the air. */
  private diskSettled(): void {
    const f = this.diskFile;
    if (!f || this.fromDisk.length) return;
    if (this.unsure && this.cameFromDisk(this.unsure.id)) return;
    this.diskFile = undefined;
    f.done(f.path, f.rows, f.keyUse);
  }

  /**
   * Writes everything buffered now, the kept batch first, then a previous stop's batches from disk, then
   * the queued key use, then the buffers (see the module comment); when any of those wait, the buffers'
   * rows are taken first, queued behind them. Never throws.
   */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    this.pending.settle();
    if (this.ctx.closed) return;
    if (!this.ctx.reachable) {
      // nothing is tried while the database is away; the rows refused at the cap meanwhile are said
      this.refused.failed("database unreachable");
      return;
    }
    // With batches to write ahead of the buffers (the kept batch, a previous stop's from disk, queued key
    // budget use), the buffers' rows are queued behind them now: the buffers have room while those are
    // written, so after an outage (the buffers full) a row recorded meanwhile waits instead of being
    // refused at the cap (until session 43 such rows were lost, said in this flush's own line).
    // A write ahead that leaves the database away again puts them back: the buffers' cap holds while it is away.
    const taken = (this.unsure || this.fromDisk.length || this.queued.length) && !this.pending.empty ? { id: crypto.randomUUID(), batch: this.pending.take() } : undefined;
    if (taken) this.queued.push(taken);
    const kept = this.unsure;
    if (kept) {
      this.unsure = undefined;
      await this.run(kept.batch, kept.id);
      if (this.unsure || !this.ctx.reachable) return this.untake(taken);
    }
    while (this.fromDisk.length) {
      const next = this.fromDisk.shift()!;
      await this.run(next.batch, next.id);
      if (this.unsure || !this.ctx.reachable) return this.untake(taken);
    }
    this.diskSettled();
    while (this.queued.length) {
      const next = this.queued.shift()!;
      await this.run(next.batch, next.id);
      if (this.unsure || !this.ctx.reachable) return this.untake(taken);
    }
    if (this.pending.empty) return;
    await this.run(this.pending.take(), crypto.randomUUID());
    this.prune();
  }

  /** Puts the buffers' rows a flush took ({@link flush}) back into the buffers (at their cap, the overflow refused and counted) when they still wait in the queue. */
  private untake(taken: IdentifiedBatch | undefined): void {
    const i = taken ? this.queued.indexOf(taken) : -1;
    if (i < 0) return;
    this.queued.splice(i, 1);
    this.putBack(taken!.batch);
  }

  /**
   * The outage probe's check that writes go through (a database that answers `SELECT 1` may still
   * hold the usage table's lock): replays the kept batch, if any, and answers whether it was written
   * in time. While an earlier replay is unanswered it answers false without sending another.
   */
  async probeWrites(): Promise<boolean> {
    const kept = this.unsure;
    if (!kept || this.ctx.closed) return true;
    if (this.replaying) return false;
    const sent = this.send(kept.batch, kept.id);
    const settled = sent.then(
      () => undefined,
      () => undefined,
    );
    this.replaying = settled;
    void settled.then(() => {
      if (this.replaying === settled) this.replaying = undefined;
    });
    try {
      const got = await answerWithin(sent, this.answerMs * this.statements(kept.batch), () => {});
      if (!got) return false;
      if (!got.value) this.replayedWritten++;
      if (this.unsure === kept) this.unsure = undefined;
      this.lastFlushAt = this.ctx.now();
      if (kept.batch.binds.size || kept.batch.quotas.size) this.ctx.announce("state");
      this.diskSettled();
      return true;
    } catch (err) {
      if (!isUnavailable(err)) {
        // Rejected (it did not commit): its rows go back to the buffers, written by the next flush.
        if (this.unsure === kept) this.unsure = undefined;
        this.putBack(kept.batch);
        this.ctx.onError(`replaying a kept flush failed: ${errMessage(err)}`, err);
        return true;
      }
      return false;
    }
  }

  private async run(batch: PendingBatch, id: string): Promise<void> {
    this.running = this.write(batch, id).finally(() => {
      this.running = undefined;
    });
    await this.running;
  }

  /** Statements a batch takes (one per 1,000 usage rows or traces). */
  private statements(batch: PendingBatch): number {
    return Math.max(1, Math.ceil(Math.max(batch.usage.length, batch.traces.length) / CHUNK));
  }

  /** Sends a batch's statements (one, or a transaction of several) with batch id `id`: whether it was new. */
  private async send(batch: PendingBatch, id: string): Promise<boolean> {
    if (batch.keyUse?.length) return this.sendKeyUse(batch, batch.keyUse, id);
    const { usage, traces, binds, quotas } = batch;
    // One row per route id (ON CONFLICT cannot touch a row twice in a statement): the newest wins.
    const byRoute = new Map<string, (typeof traces)[number]>();
    for (const t of traces) {
      byRoute.delete(t[0]);
      byRoute.set(t[0], t);
    }
    const routes = [...byRoute.values()];
    const bindRows = [...binds.values()].map((b) => [b.key, b.accountId, Math.round(b.expiresAt)]);
    const quotaRows = [...quotas.values()].map(quotaParams);
    const params = (i: number, batchId: string) => [
      pgJson(usage.slice(i, i + CHUNK)),
      pgJson(routes.slice(i, i + CHUNK)),
      i === 0 ? pgJson(bindRows) : "[]",
      i === 0 ? pgJson(quotaRows) : "[]",
      this.traceRingSize,
      batchId,
    ];
    if (usage.length <= CHUNK && routes.length <= CHUNK) {
      const [row] = await this.ctx.sql.unsafe(FLUSH, params(0, id));
      return row?.fresh === true;
    }
    // A backlog (after an outage): several statements, one transaction, one id per statement.
    return this.ctx.sql.begin(async (tx) => {
      let fresh = false;
      for (let i = 0; i < Math.max(usage.length, routes.length); i += CHUNK) {
        const [row] = await tx.unsafe(FLUSH, params(i, `${id}/${i / CHUNK}`));
        fresh ||= row?.fresh === true;
      }
      return fresh;
    });
  }

  /**
   * A batch of key budget use (./count-back-key-use.ts), with id `id`; rows in the same batch (only in
   * a file made by hand) are sent first, and the use then carries the id `ID/key-use`. What a disk
   * file's use came to is counted for its `done`. Whether something was new.
   */
  private async sendKeyUse(batch: PendingBatch, keyUse: NonNullable<PendingBatch["keyUse"]>, id: string): Promise<boolean> {
    const rows = { ...batch, keyUse: undefined };
    const rowsFresh = holdsAny(rows) ? await this.send(rows, id) : undefined;
    const got = await countBackKeyUse(this.ctx.sql, rowsFresh === undefined ? id : `${id}/key-use`, keyUse);
    if (got.fresh && this.diskFile && this.cameFromDisk(id)) {
      this.diskFile.keyUse.counted += got.counted;
      this.diskFile.keyUse.dropped += keyUse.length - got.counted;
    }
    return got.fresh || rowsFresh === true;
  }

  /** Puts back a batch that did not commit: its rows into the buffers, its key budget use into the queue (a new id: none of it was written). */
  private putBack(batch: PendingBatch): void {
    if (batch.keyUse?.length) this.queued.push({ id: crypto.randomUUID(), batch: { ...emptyBatch(), keyUse: batch.keyUse } });
    this.pending.putBack(batch);
  }

  /** Deletes batch ids older than a week, every ten minutes (in the background). */
  private prune(): void {
    const now = this.ctx.now();
    if (now - this.lastPrune < BATCH_ID_PRUNE_MS) return;
    this.lastPrune = now;
    void this.ctx.read((sql) => sql.unsafe(`DELETE FROM flush_batches WHERE at < ${DB_NOW_MS} - $1::bigint`, [BATCH_ID_KEEP_MS])).catch(() => {});
  }

  private async write(batch: PendingBatch, id: string): Promise<void> {
    const { usage, traces, binds, quotas } = batch;
    this.sending = { id, batch };
    try {
      const ms = this.answerMs * this.statements(batch);
      const answered = await answerWithin(this.send(batch, id), ms, () => {});
      if (!answered) {
        // Stalled: the statement may still commit, so the batch is kept whole with its id.
        this.flushErrors++;
        this.unsure = { id, batch };
        this.ctx.degrade(new StoreError("unavailable", `the database did not answer a flush within ${ms} ms`));
        return;
      }
      this.lastFlushAt = this.ctx.now();
      if (binds.size || quotas.size) this.ctx.announce("state");
      // the end of a run of refused flushes is said (with the rows refused at the cap meanwhile, if any)
      const again = this.failures.flushWorked(usage.length, traces.length);
      if (again) this.ctx.sayBack(again);
      else this.refused.wrote();
    } catch (err) {
      this.flushErrors++;
      if (isDataError(err) && !isUnavailable(err)) {
        // A value PostgreSQL refuses (a number beyond BIGINT from an upstream's usage, say): putting the
        // batch back would fail the same way at every flush and hold every later row back with it.
        await this.writeOneByOne(batch, id, err);
        return;
      }
      if (isUnavailable(err)) {
        // The connection broke: the statement may have committed first; kept whole with its id.
        this.unsure = { id, batch };
        this.ctx.degrade(err);
        return;
      }
      this.putBack(batch);
      this.failures.flushFailed(err, usage.length, traces.length);
      this.refused.failed("database writes failing");
    } finally {
      if (this.sending?.id === id) this.sending = undefined;
    }
  }

  /**
   * After a data exception: each usage row, trace, binding and quota window in its own statement, so
   * one refused value costs only its own row (dropped, counted in `dropped`, logged once per flush).
   * Each statement carries its own flush id, `<batch id>/row<n>` (the batch's n-th row, so a replay of
   * the batch makes the same ids), and gets the batch path's answer bound ({@link FLUSH_ANSWER_MS}):
   * a row whose statement goes unanswered or loses its connection may still commit, so it is kept with
   * its id and replayed like a stalled batch (the database counts as away; the rows not yet sent go
   * back to the buffers). Rows refused for another reason (they did not commit) go back too.
   */
  private async writeOneByOne(batch: PendingBatch, id: string, first: unknown): Promise<void> {
    const parts: PendingBatch[] = [];
    const part = (p: Partial<PendingBatch>): PendingBatch => ({ usage: [], traces: [], binds: new Map(), quotas: new Map(), budgets: new Map(), ...p });
    for (const u of batch.usage) parts.push(part({ usage: [u] }));
    for (const t of batch.traces) parts.push(part({ traces: [t] }));
    for (const [k, b] of batch.binds) parts.push(part({ binds: new Map([[k, b]]) }));
    for (const [k, q] of batch.quotas) parts.push(part({ quotas: new Map([[k, q]]) }));
    if (batch.keyUse?.length) parts.push(part({ keyUse: batch.keyUse }));
    const back: PendingBatch = part({});
    const putBack = (p: PendingBatch) => {
      back.usage.push(...p.usage);
      back.traces.push(...p.traces);
      for (const [k, b] of p.binds) back.binds.set(k, b);
      for (const [k, q] of p.quotas) back.quotas.set(k, q);
      if (p.keyUse?.length) (back.keyUse ??= []).push(...p.keyUse);
    };
    let refused = 0;
    let lastError: unknown = first;
    let away: { id: string; part: PendingBatch; err: unknown } | undefined;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (away) {
        putBack(p); // not sent: no id needed
        continue;
      }
      const rowId = `${id}/row${i}`;
      try {
        const answered = await answerWithin(this.send(p, rowId), this.answerMs, () => {});
        if (!answered) away = { id: rowId, part: p, err: new StoreError("unavailable", `the database did not answer a flush within ${this.answerMs} ms`) };
      } catch (err) {
        if (isDataError(err) && !isUnavailable(err)) {
          refused++;
          lastError = err;
        } else if (isUnavailable(err)) away = { id: rowId, part: p, err };
        else putBack(p);
      }
    }
    this.pending.dropped += refused;
    const kept = holdsAny(back);
    if (kept) this.putBack(back);
    else if (!away) this.lastFlushAt = this.ctx.now();
    if (batch.binds.size || batch.quotas.size) this.ctx.announce("state");
    if (refused || !away) this.ctx.onError(`flush: PostgreSQL refused ${refused} row(s) for their values (${errMessage(lastError)}); they were dropped, the rest ${away ? "written or kept" : "written"}`, lastError);
    if (away) {
      // The row's statement may still commit: kept whole with its id, replayed by the probe (module comment).
      this.unsure = { id: away.id, batch: away.part };
      this.ctx.degrade(away.err);
    }
  }
}
