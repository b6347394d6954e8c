/**
 * Usage rows and route traces in SQLite (SPEC O-1, O-2): `record`/`save` buffer in memory (see
 * {@link PendingWrites}); the queries behind `usage`, `calls` and the dashboard flush first, so they see
 * every row recorded before the call.
 */
import type { Statement } from "bun:sqlite";
import type { RouteTrace, UsageRecord } from "../../../pipeline/ports.ts";
import type { PendingWrites } from "../pending.ts";
import { addShareRows, clampLimit, hasSplitCalls, rowToCall, SPLIT, type UsageRow } from "../rows.ts";
import {
  type CallRow,
  StoreError,
  type UsageQuery,
  type UsageStore,
  type UsageSummaryRow,
  type CallsQuery,
  type CallsPage,
  type CallsPageQuery,
  callsWhere,
  finishCallsPage,
  rateLimitedFilterSql,
  usageFilterSql,
  withRateLimited,
} from "../types.ts";
import { fillUsageBuckets, firstBucketStart, isRequestSql, subscriptionCostSql, UNPRICED_REQUESTS_SQL, USAGE_GROUP_SQL, usageTotalsFromRow, usageTotalsSql, type UsageBucket, type UsageSeriesQuery } from "../usage.ts";
import type { SqliteContext } from "./db.ts";
import { type BlockHead, blockMayHold, decodeBlock, findLine, linesNewestFirst, type TraceLine } from "./trace-ring.ts";

const GROUP_COLUMNS = USAGE_GROUP_SQL;

/**
 * Row ids per slice of {@link SqliteUsage.servedPerModel}: 10,000 rows read in ~3 ms, 11 ms at most, on the
 * 2-core test machine at load 15 (50,000: ~17 ms, 46 ms at most).
 */
const SERVED_SLICE = 10_000;

const TOKEN_AND_COST_SUMS = usageTotalsSql();

/** A row that is a request, not a failed attempt's share (rows.ts SPLIT): what counts and averages read; its tokens and cost are summed either way. */
const REQUEST = isRequestSql();

/**
 * The usage series query: `subscription` the SELECT item of the subscriptions' cost and `where` a
 * filter's conditions (parameters ?5 on, for both). ?1 the bucket width, ?2 the first bucket's start
 * (`firstBucketStart`: every bucket starts a whole number of widths after it), ?3 the end, ?4 `sinceMs`:
 * rows from it only, so the first bucket counts no request older than the range (its rows add up to
 * the summary's of the same range).
 */
const seriesSql = (subscription: string, where: string) => `SELECT ?2 + ((ts - ?2) / ?1) * ?1 AS t, SUM(${REQUEST}) AS requests,
         SUM(${REQUEST} AND outcome IN ('error', 'upstream_error')) AS errors,
         SUM(${REQUEST} AND outcome = 'rejected') AS refused,
         SUM(fallback) AS fallbacks,
         ${TOKEN_AND_COST_SUMS}, ${subscription}
       FROM usage WHERE ts >= ?4 AND ts < ?3${where} GROUP BY t`;


/** The calls filter's "this account answered an attempt with 429" (usage.ts callsWhere). */
const LIMITED_BY = (placeholder: string) => `EXISTS (SELECT 1 FROM json_each(u.rate_limited) AS j WHERE j.value = ${placeholder})`;

/** The `UsageStore` role of the SQLite store. */
export class SqliteUsage implements UsageStore {
  private readonly s;
  private readonly summaryStmts = new Map<string, Statement>();
  private seriesStmt: Statement | undefined;

  /**
   * Prepares the statements.
   * @param pending the store's write buffers
   * @param flush writes the buffers now (the store's flush)
   */
  constructor(
    private readonly ctx: SqliteContext,
    private readonly pending: PendingWrites,
    readonly flush: () => void,
  ) {
    const db = ctx.db;
    this.s = {
      usageRecent: db.prepare(`SELECT u.* FROM usage u WHERE ${isRequestSql("u.")} ORDER BY u.ts DESC, u.id DESC LIMIT ?`),
      // a page's failed attempts' shares (rows.ts SPLIT): their request's time and id
      shares: db.prepare("SELECT * FROM usage WHERE ts IN (SELECT value FROM json_each(?1)) AND request_id IN (SELECT value FROM json_each(?2)) AND split = 2"),
      // oldest first over the usage_ts index, ?2 rows at most (-1: no limit)
      usagePrune: db.prepare("DELETE FROM usage WHERE id IN (SELECT id FROM usage WHERE ts < ?1 ORDER BY ts LIMIT ?2)"),
      idRange: db.prepare("SELECT MIN(id) AS lo, MAX(id) AS hi FROM usage"),
      servedSlice: db.prepare(`SELECT ${GROUP_COLUMNS.model} AS grp, COUNT(*) AS n FROM usage WHERE id >= ?1 AND id <= ?2 AND ${REQUEST} GROUP BY grp`),
      blockHeads: db.prepare("SELECT seq, min_route, max_route, min_request, max_request FROM trace_blocks ORDER BY seq DESC"),
      blockBody: db.prepare("SELECT body FROM trace_blocks WHERE seq = ?"),
      blocksNewest: db.prepare("SELECT body FROM trace_blocks ORDER BY seq DESC"),
    };
  }

  /** Buffers a usage row for the next flush. O(1), no I/O, never throws. */
  record(rec: UsageRecord): void {
    this.pending.record(rec);
  }

  /**
   * Buffers a route trace for the next flush, serialised now. Never throws: a trace that cannot be
   * serialised is dropped and counted.
   */
  save(trace: RouteTrace): void {
    this.pending.save(trace);
  }

  /**
   * Usage per group since `sinceMs` (and before `untilMs`), most requests first.
   * @throws StoreError `invalid` for an unknown `by`, `closed`.
   */
  usageSummary(q: UsageQuery): UsageSummaryRow[] {
    this.ctx.assertOpen();
    const col = GROUP_COLUMNS[q?.by];
    if (!col) throw new StoreError("invalid", `usage summary: unknown grouping ${JSON.stringify(q?.by)}`);
    this.flush();
    // the subscriptions' cost is selected before the WHERE: its parameters come first
    const params: string[] = [];
    const subscription = subscriptionCostSql(q.subscriptionProviders, (value) => (params.push(value), "?"));
    const subscriptionParams = params.splice(0);
    const where = usageFilterSql(q.filter, (value) => (params.push(value), "?"));
    const key = `${col}|${where}|${subscriptionParams.length}`;
    let stmt = this.summaryStmts.get(key);
    if (!stmt) {
      stmt = this.ctx.db.prepare(
        `SELECT ${col} AS grp, SUM(${REQUEST}) AS requests,
           SUM(${REQUEST} AND outcome IN ('error', 'upstream_error')) AS errors,
           SUM(${REQUEST} AND outcome = 'rejected') AS refused,
           SUM(${REQUEST} AND outcome = 'client_closed') AS client_closed,
           SUM(estimated) AS estimated,
           SUM(fallback) AS fallbacks,
           ${TOKEN_AND_COST_SUMS}, ${subscription},
           ${UNPRICED_REQUESTS_SQL} AS unpriced,
           COALESCE(SUM(saved_chars), 0) AS saved_chars,
           COALESCE(SUM(saved_tokens), 0) AS saved_tokens,
           AVG(CASE WHEN ${REQUEST} THEN total_ms END) AS avg_total_ms,
           AVG(ttfb_ms) AS avg_ttfb_ms
         FROM usage WHERE ts >= ? AND ts < ?${where}
         GROUP BY ${col} ORDER BY requests DESC, grp`,
      );
      // Filtered shapes are few (one per combination of filter fields): cached like the others.
      this.summaryStmts.set(key, stmt);
    }
    const since = Math.floor(Number(q.sinceMs) || 0);
    const until = q.untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.floor(Number(q.untilMs));
    const rows: UsageSummaryRow[] = (stmt.all(...subscriptionParams, since, until, ...params) as any[]).map((r) => ({
      group: r.grp ?? null,
      requests: r.requests,
      errors: r.errors ?? 0,
      refused: r.refused ?? 0,
      clientClosed: r.client_closed ?? 0,
      estimated: r.estimated ?? 0,
      fallbacks: r.fallbacks ?? 0,
      ...usageTotalsFromRow(r),
      unpriced: r.unpriced,
      savedChars: r.saved_chars,
      savedTokens: r.saved_tokens,
      avgTotalMs: r.avg_total_ms ?? 0,
      avgTtfbMs: r.avg_ttfb_ms ?? null,
    }));
    return q.by === "account" ? withRateLimited(rows, this.rateLimited(q, since, until)) : rows;
  }

  /** Attempts answered 429 per account hit, among the requests of `q` (see UsageSummaryRow.rateLimited). */
  private rateLimited(q: UsageQuery, since: number, until: number): Map<string, number> {
    const params: string[] = [];
    const where = rateLimitedFilterSql(q.filter, "j.value", (value) => (params.push(value), "?"));
    const found = this.ctx.db
      .query(
        `SELECT j.value AS grp, COUNT(*) AS n FROM usage, json_each(usage.rate_limited) AS j
         WHERE usage.rate_limited IS NOT NULL AND ts >= ? AND ts < ?${where} GROUP BY j.value`,
      )
      .all(since, until, ...params) as Array<{ grp: string; n: number }>;
    return new Map(found.map((r) => [String(r.grp), Number(r.n)]));
  }

  /** Usage per time bucket, every bucket present (see UsageStore). @throws StoreError `invalid`, `closed`. */
  usageSeries(q: UsageSeriesQuery): UsageBucket[] {
    this.ctx.assertOpen();
    fillUsageBuckets(q, new Map()); // validates the query before any work
    this.flush();
    const params: string[] = [];
    const where = usageFilterSql(q.filter, (value) => (params.push(value), `?${4 + params.length}`));
    const subscription = subscriptionCostSql(q.subscriptionProviders, (value) => (params.push(value), `?${4 + params.length}`));
    const stmt = params.length > 0 ? this.ctx.db.query(seriesSql(subscription, where)) : (this.seriesStmt ??= this.ctx.db.prepare(seriesSql(subscription, where)));
    const width = Math.floor(q.bucketMs);
    const first = firstBucketStart(q);
    const found = new Map<number, Omit<UsageBucket, "t">>();
    for (const r of stmt.all(width, first, Math.floor(q.untilMs), Math.max(first, Math.floor(q.sinceMs)), ...params) as any[]) {
      found.set(Number(r.t), {
        requests: r.requests,
        errors: r.errors ?? 0,
        refused: r.refused ?? 0,
        fallbacks: r.fallbacks ?? 0,
        ...usageTotalsFromRow(r),
      });
    }
    return fillUsageBuckets(q, found);
  }

  /** The `limit` (1–10,000) most recent requests, newest first, filtered. @throws StoreError `closed`. */
  recentCalls(limit: number, q: CallsQuery = {}): CallRow[] {
    this.ctx.assertOpen();
    this.flush();
    if (q.sinceMs === undefined && !q.filter) return this.withRouteIds(this.withShares(this.s.usageRecent.all(clampLimit(limit)) as UsageRow[])).map(rowToCall);
    const params: Array<string | number> = [];
    const where = usageFilterSql(q.filter, (value) => (params.push(value), "?"));
    return this.withRouteIds(
      this.withShares(
        this.ctx.db
          .query(`SELECT u.* FROM usage u WHERE ts >= ?${where} AND ${isRequestSql("u.")} ORDER BY u.ts DESC, u.id DESC LIMIT ?`)
          .all(Math.floor(Number(q.sinceMs ?? 0)), ...params, clampLimit(limit)) as UsageRow[],
      ),
    ).map(rowToCall);
  }

  /** {@link addShareRows}: the calls of `rows` split by attempt get their failed attempts' shares (one query, only when there are such calls). */
  private withShares<R extends UsageRow>(rows: R[]): R[] {
    if (!hasSplitCalls(rows)) return rows;
    const split = rows.filter((r) => Number(r.split) === SPLIT.CALL);
    const shares = this.s.shares.all(JSON.stringify([...new Set(split.map((r) => Number(r.ts)))]), JSON.stringify([...new Set(split.map((r) => r.request_id))])) as UsageRow[];
    return addShareRows(rows, shares);
  }

  /** One page of requests (see UsageStore.callsPage). @throws StoreError `closed`. */
  callsPage(q: CallsPageQuery): Promise<CallsPage> {
    this.ctx.assertOpen();
    this.flush();
    const n = clampLimit(q.limit);
    const ascending = q.before === undefined && q.after !== undefined;
    const params: Array<string | number> = [];
    const at = q.before ? { side: "older" as const, cursor: q.before } : q.after ? { side: "newer" as const, cursor: q.after } : undefined;
    const where = callsWhere(q, at, (value) => (params.push(value), "?"), LIMITED_BY);
    const dir = ascending ? "ASC" : "DESC";
    const rows = this.withRouteIds(
      this.withShares(
        this.ctx.db
          .query(`SELECT u.* FROM usage u WHERE ${where} ORDER BY u.ts ${dir}, u.id ${dir} LIMIT ?`)
          .all(...params, n + 1) as Array<UsageRow & { id: number }>,
      ),
    );
    const exists = (side: "older" | "newer", cursor: { ts: number; id: number }) => {
      const p: Array<string | number> = [];
      const w = callsWhere(q, { side, cursor }, (value) => (p.push(value), "?"), LIMITED_BY);
      return this.ctx.db.query(`SELECT 1 FROM usage u WHERE ${w} LIMIT 1`).get(...p) !== null;
    };
    return finishCallsPage({ ...q, limit: n }, rows, (r) => ({ ts: Number(r.ts), id: Number(r.id) }), rowToCall, exists);
  }

  /** The trace with this route id, else the newest with this request id. @throws StoreError `closed`. */
  getTrace(id: string): RouteTrace | undefined {
    this.ctx.assertOpen();
    this.flush();
    const heads = this.s.blockHeads.all() as BlockHead[];
    const texts = new Map<number, string>();
    const line = this.newestLine(heads, texts, String(id), true) ?? this.newestLine(heads, texts, String(id), false);
    return line ? (JSON.parse(line.json) as RouteTrace) : undefined;
  }

  /**
   * The `limit` (1–10,000) most recent traces, newest first (a route id saved more than once counts
   * once, as its newest). @throws StoreError `closed`.
   */
  recentTraces(limit: number): RouteTrace[] {
    this.ctx.assertOpen();
    this.flush();
    const n = clampLimit(limit);
    const out: RouteTrace[] = [];
    const seen = new Set<string>();
    for (const { body } of this.s.blocksNewest.iterate() as IterableIterator<{ body: Uint8Array }>) {
      for (const line of linesNewestFirst(decodeBlock(body))) {
        if (seen.has(line.routeId)) continue;
        seen.add(line.routeId);
        out.push(JSON.parse(line.json) as RouteTrace);
        if (out.length >= n) return out;
      }
    }
    return out;
  }

  /**
   * The newest trace line with this route id (`route`) or request id: the blocks whose range holds the
   * id are searched newest first; `texts` keeps the blocks decoded during one call.
   */
  private newestLine(heads: readonly BlockHead[], texts: Map<number, string>, id: string, route: boolean): TraceLine | undefined {
    for (const h of heads) {
      if (!blockMayHold(h, id, route)) continue;
      let text = texts.get(h.seq);
      if (text === undefined) {
        const row = this.s.blockBody.get(h.seq) as { body: Uint8Array } | null;
        if (!row) continue;
        text = decodeBlock(row.body);
        texts.set(h.seq, text);
      }
      const line = findLine(text, id, route);
      if (line) return line;
    }
    return undefined;
  }

  /**
   * Sets each call row's `route_id`: the route id of the newest trace with its request id, else null.
   * The blocks whose request id range meets the rows' are decoded once each, newest first.
   */
  private withRouteIds<R extends UsageRow>(rows: R[]): R[] {
    if (!rows.length) return rows;
    const wanted = new Set<string>();
    let lo = String(rows[0]!.request_id);
    let hi = lo;
    for (const r of rows) {
      const id = String(r.request_id);
      wanted.add(id);
      if (id < lo) lo = id;
      else if (id > hi) hi = id;
    }
    const routeOf = new Map<string, string>();
    for (const h of this.s.blockHeads.all() as BlockHead[]) {
      if (h.max_request < lo || h.min_request > hi) continue;
      const row = this.s.blockBody.get(h.seq) as { body: Uint8Array } | null;
      if (!row) continue;
      for (const line of linesNewestFirst(decodeBlock(row.body))) {
        if (wanted.has(line.requestId) && !routeOf.has(line.requestId)) routeOf.set(line.requestId, line.routeId);
      }
      if (routeOf.size === wanted.size) break;
    }
    for (const r of rows) r.route_id = routeOf.get(String(r.request_id)) ?? null;
    return rows;
  }

  /**
   * Deletes usage rows with `ts` < beforeMs, oldest first, at most `limit` (all when absent).
   * @returns rows deleted. @throws StoreError `closed`.
   */
  pruneUsage(beforeMs: number, limit?: number): number {
    this.ctx.assertOpen();
    this.flush();
    const n = limit === undefined ? -1 : Math.max(0, Math.floor(Number(limit)));
    return this.s.usagePrune.run(Math.floor(Number(beforeMs)), n).changes;
  }

  /**
   * Requests per served `provider/model` (see UsageStore.servedPerModel), read in slices of
   * {@link SERVED_SLICE} row ids up to the newest row when called, a macrotask between slices: summing a
   * million rows at once held the event loop (and the first least-used request) for the whole read.
   * @throws StoreError `closed` (also when the store closes between slices).
   */
  async servedPerModel(only?: ReadonlySet<string>): Promise<Map<string, number>> {
    this.ctx.assertOpen();
    if (only?.size === 0) return new Map();
    this.flush();
    const { lo, hi } = this.s.idRange.get() as { lo: number | null; hi: number | null };
    const out = new Map<string, number>();
    if (lo === null || hi === null) return out;
    for (let from = lo; from <= hi; from += SERVED_SLICE) {
      if (from > lo) {
        await new Promise((r) => setTimeout(r, 0));
        this.ctx.assertOpen();
      }
      for (const r of this.s.servedSlice.all(from, Math.min(hi, from + SERVED_SLICE - 1)) as Array<{ grp: string | null; n: number }>) {
        if (r.grp !== null && (only === undefined || only.has(r.grp))) out.set(r.grp, (out.get(r.grp) ?? 0) + r.n);
      }
    }
    return out;
  }

  /** Finalizes the prepared statements (the store is closing). */
  finalize(): void {
    for (const stmt of this.summaryStmts.values()) stmt.finalize();
    this.seriesStmt?.finalize();
    for (const stmt of Object.values(this.s)) stmt.finalize();
  }
}
