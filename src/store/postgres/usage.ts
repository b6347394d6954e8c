/**
 * Usage rows and route traces in PostgreSQL (SPEC O-1, O-2, D-2): every instance writes into the same
 * tables, so `usage`, `calls` and the dashboard on any instance show every instance's requests (those
 * still in another instance's buffer appear at its next flush, within a second). The queries flush this
 * instance's buffer first.
 */
import type { RouteTrace, UsageRecord } from "../../../pipeline/ports.ts";
import type { PendingWrites } from "../pending.ts";
import { addShareRows, clampLimit, hasSplitCalls, rowToCall, SPLIT, type UsageRow } from "../rows.ts";
import { type CallRow, StoreError, type UsageQuery, type UsageStore, type UsageSummaryRow, type CallsQuery, type CallsPage, type CallsPageQuery, callsWhere, finishCallsPage, rateLimitedFilterSql, usageFilterSql, withRateLimited } from "../types.ts";
import { fillUsageBuckets, firstBucketStart, isRequestSql, subscriptionCostSql, UNPRICED_REQUESTS_SQL, USAGE_GROUP_SQL, usageTotalsFromRow, usageTotalsSql, type UsageBucket, type UsageSeriesQuery } from "../usage.ts";
import type { PgContext } from "./db.ts";
import { num, numOrNull } from "./values.ts";

const GROUP_COLUMNS = USAGE_GROUP_SQL;

/** The calls filter's "this account answered an attempt with 429" (usage.ts callsWhere). */
const LIMITED_BY = (placeholder: string) => `EXISTS (SELECT 1 FROM json_array_elements_text(u.rate_limited::json) AS j(value) WHERE j.value = ${placeholder})`;

const TOKEN_AND_COST_SUMS = usageTotalsSql("::float8");

/** A row that is a request, not a failed attempt's share (rows.ts SPLIT): what counts and averages read; its tokens and cost are summed either way. */
const REQUEST = isRequestSql();

/** The `UsageStore` role of the PostgreSQL store. */
export class PgUsage implements UsageStore {
  /**
   * @param pending the store's write buffers
   * @param flush writes the buffers now (the store's flush)
   */
  constructor(
    private readonly ctx: PgContext,
    private readonly pending: PendingWrites,
    readonly flush: () => Promise<void>,
  ) {}

  /** Buffers a usage row for the next flush. O(1), no I/O, never throws. */
  record(rec: UsageRecord): void {
    this.pending.record(rec);
  }

  /** Buffers a route trace for the next flush, serialised now. Never throws. */
  save(trace: RouteTrace): void {
    this.pending.save(trace);
  }

  /**
   * Usage per group since `sinceMs` (and before `untilMs`), most requests first, over every instance.
   * @throws StoreError `invalid` for an unknown `by`, `closed`, `unavailable`.
   */
  async usageSummary(q: UsageQuery): Promise<UsageSummaryRow[]> {
    this.ctx.assertOpen();
    const col = GROUP_COLUMNS[q?.by];
    if (!col) throw new StoreError("invalid", `usage summary: unknown grouping ${JSON.stringify(q?.by)}`);
    await this.flush();
    const since = Math.floor(Number(q.sinceMs) || 0);
    const until = q.untilMs === undefined ? Number.MAX_SAFE_INTEGER : Math.floor(Number(q.untilMs));
    const params: Array<string | number> = [since, until];
    const where = usageFilterSql(q.filter, (value) => (params.push(value), `$${params.length}`));
    const subscription = subscriptionCostSql(q.subscriptionProviders, (value) => (params.push(value), `$${params.length}`), "::float8");
    const rows = await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT ${col} AS grp, COUNT(*) FILTER (WHERE ${REQUEST})::float8 AS requests,
           COUNT(*) FILTER (WHERE ${REQUEST} AND outcome IN ('error', 'upstream_error'))::float8 AS errors,
           COUNT(*) FILTER (WHERE ${REQUEST} AND outcome = 'rejected')::float8 AS refused,
           COUNT(*) FILTER (WHERE ${REQUEST} AND outcome = 'client_closed')::float8 AS client_closed,
           COUNT(*) FILTER (WHERE estimated)::float8 AS estimated,
           COUNT(*) FILTER (WHERE fallback)::float8 AS fallbacks,
           ${TOKEN_AND_COST_SUMS}, ${subscription},
           (${UNPRICED_REQUESTS_SQL})::float8 AS unpriced,
           COALESCE(SUM(saved_chars), 0)::float8 AS saved_chars,
           COALESCE(SUM(saved_tokens), 0)::float8 AS saved_tokens,
           (AVG(total_ms) FILTER (WHERE ${REQUEST}))::float8 AS avg_total_ms,
           AVG(ttfb_ms)::float8 AS avg_ttfb_ms
         FROM usage WHERE ts >= $1 AND ts < $2${where}
         GROUP BY ${col} ORDER BY requests DESC, ${col} COLLATE "C" NULLS FIRST`,
        params,
      ),
    );
    const out: UsageSummaryRow[] = (rows as any[]).map((r) => ({
      group: r.grp ?? null,
      requests: num(r.requests),
      errors: num(r.errors),
      refused: num(r.refused),
      clientClosed: num(r.client_closed),
      estimated: num(r.estimated),
      fallbacks: num(r.fallbacks),
      ...usageTotalsFromRow(r),
      unpriced: num(r.unpriced),
      savedChars: num(r.saved_chars),
      savedTokens: num(r.saved_tokens),
      avgTotalMs: num(r.avg_total_ms),
      avgTtfbMs: numOrNull(r.avg_ttfb_ms),
    }));
    return q.by === "account" ? withRateLimited(out, await this.rateLimited(q, since, until)) : out;
  }

  /** Attempts answered 429 per account hit, among the requests of `q` (see UsageSummaryRow.rateLimited). */
  private async rateLimited(q: UsageQuery, since: number, until: number): Promise<Map<string, number>> {
    const params: Array<string | number> = [since, until];
    const where = rateLimitedFilterSql(q.filter, "j.value", (value) => (params.push(value), `$${params.length}`));
    const found = await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT j.value AS grp, COUNT(*)::float8 AS n FROM usage, json_array_elements_text(usage.rate_limited::json) AS j(value)
         WHERE usage.rate_limited IS NOT NULL AND ts >= $1 AND ts < $2${where} GROUP BY j.value`,
        params,
      ),
    );
    return new Map((found as any[]).map((r) => [String(r.grp), num(r.n)]));
  }

  /** Usage per time bucket of every instance, every bucket present (see UsageStore). */
  async usageSeries(q: UsageSeriesQuery): Promise<UsageBucket[]> {
    this.ctx.assertOpen();
    fillUsageBuckets(q, new Map()); // validates the query before any work
    await this.flush();
    const width = Math.floor(q.bucketMs);
    const first = firstBucketStart(q);
    // $4: rows from `sinceMs` only, so the first bucket counts no request older than the range.
    const params: Array<string | number> = [width, first, Math.floor(q.untilMs), Math.max(first, Math.floor(q.sinceMs))];
    const where = usageFilterSql(q.filter, (value) => (params.push(value), `$${params.length}`));
    const subscription = subscriptionCostSql(q.subscriptionProviders, (value) => (params.push(value), `$${params.length}`), "::float8");
    const rows = await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT $2 + ((ts - $2) / $1) * $1 AS t, COUNT(*) FILTER (WHERE ${REQUEST})::float8 AS requests,
           COUNT(*) FILTER (WHERE ${REQUEST} AND outcome IN ('error', 'upstream_error'))::float8 AS errors,
           COUNT(*) FILTER (WHERE ${REQUEST} AND outcome = 'rejected')::float8 AS refused,
           COUNT(*) FILTER (WHERE fallback)::float8 AS fallbacks,
           ${TOKEN_AND_COST_SUMS}, ${subscription}
         FROM usage WHERE ts >= $4 AND ts < $3${where} GROUP BY 1`,
        params,
      ),
    );
    const found = new Map<number, Omit<UsageBucket, "t">>();
    for (const r of rows as any[]) {
      found.set(num(r.t), {
        requests: num(r.requests),
        errors: num(r.errors),
        refused: num(r.refused),
        fallbacks: num(r.fallbacks),
        ...usageTotalsFromRow(r),
      });
    }
    return fillUsageBuckets(q, found);
  }

  /** The `limit` (1–10,000) most recent requests of every instance, newest first, filtered. */
  async recentCalls(limit: number, q: CallsQuery = {}): Promise<CallRow[]> {
    this.ctx.assertOpen();
    await this.flush();
    const n = clampLimit(limit);
    const params: Array<string | number> = [Math.floor(Number(q.sinceMs ?? 0)), n];
    const where = usageFilterSql(q.filter, (value) => (params.push(value), `$${params.length}`));
    const rows = await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT u.*, (SELECT t.route_id FROM route_traces t WHERE t.request_id = u.request_id ORDER BY t.seq DESC LIMIT 1) AS route_id
         FROM usage u WHERE ts >= $1${where} AND ${isRequestSql("u.")} ORDER BY u.ts DESC, u.id DESC LIMIT $2`,
        params,
      ),
    );
    return (await this.withShares(rows as any[])).map((r) => rowToCall(toUsageRow(r)));
  }

  /** {@link addShareRows}: the calls of `rows` split by attempt get their failed attempts' shares (one query, only when there are such calls). */
  private async withShares<R extends UsageRow>(rows: R[]): Promise<R[]> {
    if (!hasSplitCalls(rows)) return rows;
    const split = rows.filter((r) => Number(r.split) === SPLIT.CALL);
    const ts = JSON.stringify([...new Set(split.map((r) => Number(r.ts)))]);
    const ids = JSON.stringify([...new Set(split.map((r) => String(r.request_id)))]);
    const shares = await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT * FROM usage WHERE ts IN (SELECT (json_array_elements_text($1::text::json))::bigint)
           AND request_id IN (SELECT json_array_elements_text($2::text::json)) AND split = 2`,
        [ts, ids],
      ),
    );
    return addShareRows(rows, shares as UsageRow[]);
  }

  /** One page of requests of every instance (see UsageStore.callsPage). */
  async callsPage(q: CallsPageQuery): Promise<CallsPage> {
    this.ctx.assertOpen();
    await this.flush();
    const n = clampLimit(q.limit);
    const ascending = q.before === undefined && q.after !== undefined;
    const params: Array<string | number> = [];
    const at = q.before ? { side: "older" as const, cursor: q.before } : q.after ? { side: "newer" as const, cursor: q.after } : undefined;
    const where = callsWhere(q, at, (value) => (params.push(value), `$${params.length}`), LIMITED_BY);
    const dir = ascending ? "ASC" : "DESC";
    params.push(n + 1);
    const rows = (await this.ctx.read((sql) =>
      sql.unsafe(
        `SELECT u.*, (SELECT t.route_id FROM route_traces t WHERE t.request_id = u.request_id ORDER BY t.seq DESC LIMIT 1) AS route_id
         FROM usage u WHERE ${where} ORDER BY u.ts ${dir}, u.id ${dir} LIMIT $${params.length}`,
        params,
      ),
    )) as any[];
    await this.withShares(rows);
    const exists = async (side: "older" | "newer", cursor: { ts: number; id: number }) => {
      const p: Array<string | number> = [];
      const w = callsWhere(q, { side, cursor }, (value) => (p.push(value), `$${p.length}`), LIMITED_BY);
      const found = await this.ctx.read((sql) => sql.unsafe(`SELECT 1 FROM usage u WHERE ${w} LIMIT 1`, p));
      return (found as unknown[]).length > 0;
    };
    return finishCallsPage({ ...q, limit: n }, rows, (r) => ({ ts: Number(r.ts), id: Number(r.id) }), (r) => rowToCall(toUsageRow(r)), exists);
  }

  /** The trace with this route id, else the newest with this request id. */
  async getTrace(id: string): Promise<RouteTrace | undefined> {
    this.ctx.assertOpen();
    await this.flush();
    const key = String(id);
    const rows = await this.ctx.read(
      (sql) => sql`(SELECT body, 0 AS pref, seq FROM route_traces WHERE route_id = ${key})
                   UNION ALL (SELECT body, 1 AS pref, seq FROM route_traces WHERE request_id = ${key} ORDER BY seq DESC LIMIT 1)
                   ORDER BY pref, seq DESC LIMIT 1`,
    );
    const row = rows[0] as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as RouteTrace) : undefined;
  }

  /** The `limit` (1–10,000) most recent traces, newest first. */
  async recentTraces(limit: number): Promise<RouteTrace[]> {
    this.ctx.assertOpen();
    await this.flush();
    const n = clampLimit(limit);
    const rows = await this.ctx.read((sql) => sql`SELECT body FROM route_traces ORDER BY seq DESC LIMIT ${n}`);
    return (rows as { body: string }[]).map((r) => JSON.parse(r.body));
  }

  /**
   * Deletes usage rows with `ts` < beforeMs (every instance's), oldest first, at most `limit` (all when
   * absent). @returns rows deleted.
   */
  async pruneUsage(beforeMs: number, limit?: number): Promise<number> {
    this.ctx.assertOpen();
    await this.flush();
    const before = Math.floor(Number(beforeMs));
    const n = limit === undefined ? null : Math.max(0, Math.floor(Number(limit))); // LIMIT NULL: no limit
    const res = await this.ctx.change((sql) => sql`DELETE FROM usage WHERE id IN (SELECT id FROM usage WHERE ts < ${before} ORDER BY ts LIMIT ${n})`);
    return res.count;
  }

  /**
   * Requests per served `provider/model` (see UsageStore.servedPerModel): one query, awaited off the
   * event loop; with `only`, its pairs alone are grouped and returned (the rest filtered in the query).
   */
  async servedPerModel(only?: ReadonlySet<string>): Promise<Map<string, number>> {
    this.ctx.assertOpen();
    if (only?.size === 0) return new Map();
    await this.flush();
    const rows = await this.ctx.read((sql) =>
      only === undefined
        ? sql.unsafe(`SELECT ${USAGE_GROUP_SQL.model} AS grp, COUNT(*) AS n FROM usage WHERE ${REQUEST} GROUP BY grp`)
        : sql.unsafe(`SELECT ${USAGE_GROUP_SQL.model} AS grp, COUNT(*) AS n FROM usage WHERE ${REQUEST} AND ${USAGE_GROUP_SQL.model} IN (SELECT json_array_elements_text($1::text::json)) GROUP BY grp`, [JSON.stringify([...only])]),
    );
    const out = new Map<string, number>();
    for (const r of rows as Array<{ grp: string | null; n: unknown }>) if (r.grp !== null) out.set(String(r.grp), num(r.n));
    return out;
  }
}

function toUsageRow(r: any): UsageRow {
  return {
    ...r,
    ts: num(r.ts),
    input_tokens: numOrNull(r.input_tokens),
    output_tokens: numOrNull(r.output_tokens),
    cache_read_tokens: numOrNull(r.cache_read_tokens),
    cache_write_tokens: numOrNull(r.cache_write_tokens),
    reasoning_tokens: numOrNull(r.reasoning_tokens),
    ttfb_ms: numOrNull(r.ttfb_ms),
    total_ms: num(r.total_ms),
  };
}
