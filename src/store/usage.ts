/**
 * The usage-and-traces role of the store (SPEC O-1, O-2, D-1): one usage row and one route trace per
 * request, buffered and flushed in batches, and the queries behind `usage`, `calls` and the dashboard.
 * Conventions: see `./types.ts`.
 */
import type { RouteTrace, TraceSink, UsageRecord, UsageSink } from "../../pipeline/ports.ts";
import { StoreError, type Awaitable } from "./types.ts";

/**
 * Grouping of `usageSummary`. `model` groups by what served the request, `provider/model` (the name a
 * client can send, as the dashboard and `switchyard usage` show it): one model id served by two
 * providers (`anthropic/claude-sonnet-4-5` on an API key, `cc/claude-sonnet-4-5` on a subscription)
 * is two groups, never one that adds up their tokens and cost.
 */
export type UsageGroupBy = "model" | "account" | "key" | "provider" | "instance";

/**
 * The SQL expression each grouping groups by over the `usage` table, shared by the backends (SQLite
 * and PostgreSQL both concatenate with `||`, NULL when either side is NULL): a request no model served
 * (refused, or failed before reaching one) has the NULL group.
 */
export const USAGE_GROUP_SQL: Record<UsageGroupBy, string> = {
  model: "(CASE WHEN provider_id IS NULL THEN model ELSE provider_id || '/' || model END)",
  account: "account_id",
  key: "key_name",
  provider: "provider_id",
  // newuser12a G11: the instance that served (its name); rows written before schema 16 have none
  instance: "instance",
};

/**
 * The condition that a `usage` row is a request (rows.ts SPLIT): not a failed attempt's share, which
 * only its tokens and cost count (under its own provider, model and account), never the requests,
 * outcomes, times or calls. `alias` the table's (`u.`) in a calls query.
 */
export const isRequestSql = (alias = ""): string => `${alias}split < 2`;

/**
 * A group's requests that used a model without a price (`UsageSummaryRow.unpriced`), one SQL expression
 * for both stores: each whole request's row (`split = 0`) marked unpriced, plus each request whose
 * served share or billed failed attempts (`split` 1 and 2: rows of one request, alike in `ts` and
 * `request_id`) hold an unpriced row in the group, counted once however many of its rows do. Until
 * 2026-12-08 every unpriced row counted, so one request with two billed failed attempts of an unpriced
 * model read as 3 unpriced requests beside 1 request.
 */
export const UNPRICED_REQUESTS_SQL =
  "COUNT(CASE WHEN unpriced AND split = 0 THEN 1 END) + COUNT(DISTINCT CASE WHEN unpriced AND split > 0 THEN ts || ':' || request_id END)";

/** Query of `usageSummary`. */
export interface UsageQuery {
  /** Only requests that arrived at or after this time (ms since the epoch). */
  sinceMs: number;
  /** Only requests that arrived before this time (ms since the epoch); default: no upper bound. */
  untilMs?: number;
  by: UsageGroupBy;
  /** Only requests matching every given field. */
  filter?: UsageFilter;
  /** The subscription providers' ids: the part of each row's cost they served is its `subscriptionUsd` (0 when none given). */
  subscriptionProviders?: readonly string[];
}

/**
 * Narrows usage queries (the dashboard's filters, SPEC 9.4). Each field is an exact match; `model`
 * matches the requested name, the served upstream model or `provider/model`.
 */
export interface UsageFilter {
  model?: string;
  account?: string;
  key?: string;
  provider?: string;
  /** `ok`, `error`, `upstream_error`, `client_closed` or `rejected`. */
  outcome?: string;
  /** The name of the instance that served (UsageRecord.instance). */
  instance?: string;
  /** How the request came: `http`, `websocket`, or `unknown` for rows that name none (UsageRecord.transport). */
  transport?: string;
}

/**
 * The WHERE conditions (each starting with " AND ") of a {@link UsageFilter} over the `usage` table;
 * `param` adds a bound value and returns its placeholder (`?` or `$n`). Shared by the backends so both
 * filter the same way.
 */
export function usageFilterSql(filter: UsageFilter | undefined, param: (value: string) => string): string {
  if (!filter) return "";
  let out = "";
  if (filter.model !== undefined) {
    out += ` AND (requested_model = ${param(filter.model)} OR model = ${param(filter.model)} OR (provider_id || '/' || model) = ${param(filter.model)})`;
  }
  if (filter.account !== undefined) out += ` AND account_id = ${param(filter.account)}`;
  if (filter.key !== undefined) out += ` AND key_name = ${param(filter.key)}`;
  if (filter.provider !== undefined) out += ` AND provider_id = ${param(filter.provider)}`;
  if (filter.outcome !== undefined) out += ` AND outcome = ${param(filter.outcome)}`;
  if (filter.instance !== undefined) out += ` AND instance = ${param(filter.instance)}`;
  // try17's tryout: rows recorded before the transport was kept name none, and match only `unknown`
  if (filter.transport !== undefined) out += filter.transport === "unknown" ? " AND transport IS NULL" : ` AND transport = ${param(filter.transport)}`;
  return out;
}

/**
 * The WHERE conditions of the rate-limit count by account (`usage.rate_limited`'s elements, each as
 * `element`): the filter's other fields narrow the requests as {@link usageFilterSql} does, its
 * `account` names the account that was hit.
 */
export function rateLimitedFilterSql(filter: UsageFilter | undefined, element: string, param: (value: string) => string): string {
  const { account, ...rest } = filter ?? {};
  return usageFilterSql(rest, param) + (account !== undefined ? ` AND ${element} = ${param(account)}` : "");
}

/**
 * Summary rows by account with each account's rate-limited attempts (`rateLimited`, 0 when none) from
 * `hits` (account id → attempts answered 429); an account that was only hit, never served, gets a row
 * of its own with no requests. Shared by the backends.
 */
export function withRateLimited(rows: UsageSummaryRow[], hits: Map<string, number>): UsageSummaryRow[] {
  const out = rows.map((r) => ({ ...r, rateLimited: (r.group !== null ? hits.get(r.group) : undefined) ?? 0 }));
  const seen = new Set(rows.map((r) => r.group));
  for (const [group, n] of hits) {
    if (seen.has(group)) continue;
    out.push({
      group, requests: 0, errors: 0, refused: 0, clientClosed: 0, estimated: 0, fallbacks: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
      cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0, subscriptionUsd: 0, unpriced: 0, savedChars: 0, savedTokens: 0, avgTotalMs: 0, avgTtfbMs: null, rateLimited: n,
    });
  }
  return out;
}

/** Filters of `recentCalls`. */
export interface CallsQuery {
  /** Only requests that arrived at or after this time (ms since the epoch). */
  sinceMs?: number;
  filter?: UsageFilter;
  /** Only the request with this request id (`X-Request-Id`, `req_…`); read by `callsPage`. */
  requestId?: string;
}

/**
 * A position in the calls list (newest first): the arrival time and the usage row's id, which orders
 * calls that arrived in the same millisecond. Written as the opaque string `"<ts>.<id>"` by
 * {@link formatCallCursor}; the admin API's `before` / `after` and its `older` / `newer` answers.
 */
export interface CallCursor {
  ts: number;
  id: number;
}

/** The string form of a {@link CallCursor}. */
export const formatCallCursor = (c: CallCursor): string => `${c.ts}.${c.id}`;

/** A cursor string read back; undefined when it is not one {@link formatCallCursor} writes. */
export function parseCallCursor(s: string): CallCursor | undefined {
  const m = /^(\d{1,16})\.(\d{1,16})$/.exec(s);
  if (!m) return undefined;
  const ts = Number(m[1]);
  const id = Number(m[2]);
  return Number.isSafeInteger(ts) && Number.isSafeInteger(id) ? { ts, id } : undefined;
}

/**
 * Query of `callsPage`: at most `limit` calls (1–10,000), newest first, of those matching `sinceMs` and
 * `filter`; with `before`, only calls older than that position; with `after` (and no `before`), the
 * `limit` calls just newer than it.
 */
export interface CallsPageQuery extends CallsQuery {
  limit: number;
  before?: CallCursor;
  after?: CallCursor;
}

/** One page of calls, newest first, with the cursors of the pages on either side when there are calls there. */
export interface CallsPage {
  calls: CallRow[];
  /** Pass as `before` for the next older page; absent when no older call matches. */
  older?: string;
  /** Pass as `after` for the next newer page; absent when no newer call matches (this is the newest page). */
  newer?: string;
}

/**
 * The WHERE clause (without "WHERE") of a calls query over `usage u`: `sinceMs`, the filter, and the
 * side of `at` (strictly older or newer, ties on `ts` ordered by id). The cursor's condition is
 * written `ts <= x AND (ts < x OR id < y)` (and its mirror) so that the `usage_ts` index bounds the
 * scan in SQLite and PostgreSQL alike. `param` binds a value and returns its placeholder.
 *
 * The filter's `account` keeps the calls that account served and those in which it answered an
 * attempt with 429 (`u.rate_limited`, newuser12b's tryout: a call that fell over from a rate-limited
 * account was not found by it): `limitedBy` is the backend's condition that the placeholder it is
 * given is one of the row's `rate_limited` ids (a JSON array in text).
 */
export function callsWhere(
  q: CallsQuery,
  at: { side: "older" | "newer"; cursor: CallCursor } | undefined,
  param: (value: string | number) => string,
  limitedBy: (placeholder: string) => string,
): string {
  const since = Math.floor(Number(q.sinceMs ?? 0));
  // One placeholder per use (SQLite's `?` binds one value each). A single lower bound on ts: given two
  // (`ts >= since AND ts >= cursor`), SQLite seeks the index by the first and scans up to the cursor.
  let where: string;
  // a failed attempt's share (rows.ts SPLIT) is no call: its request's row lists it (addShareRows)
  if (!at) where = `u.ts >= ${param(since)}`;
  else if (at.side === "older") where = `u.ts >= ${param(since)} AND u.ts <= ${param(at.cursor.ts)} AND (u.ts < ${param(at.cursor.ts)} OR u.id < ${param(at.cursor.id)})`;
  else where = `u.ts >= ${param(Math.max(since, at.cursor.ts))} AND (u.ts > ${param(at.cursor.ts)} OR u.id > ${param(at.cursor.id)})`;
  const { account, ...rest } = q.filter ?? {};
  where += usageFilterSql(rest, (v) => param(v));
  if (account !== undefined) where += ` AND (u.account_id = ${param(account)} OR (u.rate_limited IS NOT NULL AND ${limitedBy(param(account))}))`;
  if (q.requestId !== undefined) where += ` AND u.request_id = ${param(q.requestId)}`;
  return `${where} AND ${isRequestSql("u.")}`;
}

/**
 * Turns the rows of a page query (`limit + 1` rows read in the query's own order: newest first, or
 * oldest first for an `after` query) into a {@link CallsPage}; `exists` answers whether any call lies
 * beyond a cursor on a side (a one-row query), asked only for the side the rows cannot tell.
 */
export async function finishCallsPage<R>(
  q: CallsPageQuery,
  rows: R[],
  cursorOf: (r: R) => CallCursor,
  toCall: (r: R) => CallRow,
  exists: (side: "older" | "newer", at: CallCursor) => Awaitable<boolean>,
): Promise<CallsPage> {
  const n = Math.max(1, Math.floor(q.limit));
  const ascending = q.before === undefined && q.after !== undefined;
  const more = rows.length > n;
  const kept = rows.slice(0, n);
  if (ascending) kept.reverse();
  const page: CallsPage = { calls: kept.map(toCall) };
  const newest = kept.length > 0 ? cursorOf(kept[0]) : undefined;
  const oldest = kept.length > 0 ? cursorOf(kept[kept.length - 1]) : undefined;
  if (ascending) {
    if (more) page.newer = formatCallCursor(newest!);
    const from = oldest ?? q.after!;
    if (await exists("older", from)) page.older = formatCallCursor(from);
  } else {
    if (more) page.older = formatCallCursor(oldest!);
    if (q.before !== undefined) {
      const from = newest ?? q.before;
      if (await exists("newer", from)) page.newer = formatCallCursor(from);
    }
  }
  return page;
}

/**
 * One group of `usageSummary`. Token sums count only what providers reported (unknown = 0), and with a
 * request's tokens and cost those of its failed attempts that their providers reported (billed), each
 * under the attempt's own provider, model and account (rows.ts SPLIT): a group may have tokens and cost
 * but no requests (a model only tried, whose attempts failed).
 */
export interface UsageSummaryRow {
  /** The model / account id / key name / provider id, or null for requests without one (e.g. rejected). */
  group: string | null;
  requests: number;
  /**
   * Requests that failed upstream or in the gateway (outcome `error` or `upstream_error`); the gateway's
   * own refusals are `refused` (until 2026-12-06 counted here too, try18 D11).
   */
  errors: number;
  /** Requests the gateway refused itself (outcome `rejected`: no or wrong key 401, disabled key 403, key limits 429, a body refused 400). */
  refused: number;
  /** Requests the client abandoned (`client_closed`). */
  clientClosed: number;
  /** Requests whose token counts are estimates (provider gave no usage). */
  estimated: number;
  /** Requests served after a fallback. */
  fallbacks: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Sum of the priced requests' cost in USD (SPEC 9.5), subscriptions' use at API prices included. */
  costUsd: number;
  /**
   * The part of `costUsd` served by the query's subscription providers: their use at API prices, not
   * money spent (SPEC 9.5; the subscription is paid by the month). 0 when the query names none.
   */
  subscriptionUsd: number;
  /**
   * Requests of the group that used a model without a price: served tokens with it, or had a failed
   * attempt at it whose usage its provider reported (billed), each request counted once per group (by
   * model, account or provider under the model, account or provider that was unpriced, which for a
   * failed attempt's part may be a group with no request of its own); `costUsd` leaves their unpriced
   * part out. ({@link UNPRICED_REQUESTS_SQL})
   */
  unpriced: number;
  /** SPEC S-4: characters the token savers removed from the bodies sent upstream. */
  savedChars: number;
  /** SPEC S-4: estimated tokens the token savers removed (characters / 4 per request, rounded). */
  savedTokens: number;
  /** Mean ms from arrival to end of response. */
  avgTotalMs: number;
  /** Mean ms to first byte over requests that have one; null when none did. */
  avgTtfbMs: number | null;
  /**
   * By account only: attempts this account answered with a rate limit (429), whichever account then
   * served the request (its `requests` count only what it served). Absent for other groupings.
   */
  rateLimited?: number;
}

/** A row of `calls list`: the usage record plus the route id of its trace when one is stored. */
export interface CallRow extends UsageRecord {
  routeId?: string;
}

/** Counters for /metrics and diagnostics. */
export interface StoreStats {
  /** Usage records waiting for the next flush. */
  pendingUsage: number;
  /** Route traces waiting for the next flush. */
  pendingTraces: number;
  /** Records/traces dropped because the buffer overflowed while flushes failed, or after close. */
  dropped: number;
  /** Flushes that failed (their rows were kept for the next one). */
  flushErrors: number;
  /** ms since the epoch of the last successful flush that wrote something; 0 = never. */
  lastFlushAt: number;
}

/**
 * Query of `usageSeries`: buckets of `bucketMs` from `sinceMs` (rounded down to a bucket) to `untilMs`,
 * of the requests from `sinceMs` on: the first bucket counts none older (since 2026-12-07; before, it
 * counted its whole width, so a series added up to more than the summary of the same range).
 */
export interface UsageSeriesQuery {
  /** ms since the epoch. */
  sinceMs: number;
  /** ms since the epoch (exclusive). */
  untilMs: number;
  /** Bucket width in ms (at least 1,000). Buckets start at multiples of it since the epoch, moved by `offsetMs`. */
  bucketMs: number;
  /**
   * The caller's UTC offset, ms east of UTC (default 0): buckets start at multiples of `bucketMs` in
   * that local time (a 1d bucket at the caller's midnight, not UTC's); see {@link firstBucketStart}.
   */
  offsetMs?: number;
  /** Only requests matching every given field. */
  filter?: UsageFilter;
  /** The subscription providers' ids: the part of each bucket's cost they served is its `subscriptionUsd`. */
  subscriptionProviders?: readonly string[];
}

/** One time bucket of `usageSeries`: the requests that arrived in [t, t + bucketMs), the first bucket's from `sinceMs` only. */
export interface UsageBucket {
  /** ms since the epoch when the bucket starts. */
  t: number;
  requests: number;
  /**
   * Requests that failed upstream or in the gateway (outcome `error` or `upstream_error`); the gateway's
   * own refusals are `refused` (until 2026-12-06 counted here too, try18 D11).
   */
  errors: number;
  /** Requests the gateway refused itself (outcome `rejected`: no or wrong key 401, disabled key 403, key limits 429, a body refused 400). */
  refused: number;
  fallbacks: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Sum of the priced requests' cost in USD (SPEC 9.5), subscriptions' use at API prices included. */
  costUsd: number;
  /** The part of `costUsd` served by the query's subscription providers (see UsageSummaryRow.subscriptionUsd). */
  subscriptionUsd: number;
}

/** The summed token and cost columns of a usage row, as both backends' queries name them. */
export type UsageTotals = Pick<UsageBucket, "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "reasoningTokens" | "costUsd" | "subscriptionUsd">;

/**
 * {@link UsageTotals} from a summary or series row (SQLite gives numbers; PostgreSQL's float8 sums
 * may arrive as strings; null reads as 0).
 */
export function usageTotalsFromRow(r: Record<string, unknown>): UsageTotals {
  return {
    inputTokens: Number(r.input_tokens ?? 0),
    outputTokens: Number(r.output_tokens ?? 0),
    cacheReadTokens: Number(r.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r.cache_write_tokens ?? 0),
    reasoningTokens: Number(r.reasoning_tokens ?? 0),
    costUsd: Number(r.cost_usd ?? 0),
    subscriptionUsd: Number(r.subscription_usd ?? 0),
  };
}

/**
 * The SELECT item `subscription_usd` that {@link usageTotalsFromRow} reads back: the summed cost of the
 * requests served by `providers` (provider ids, each bound through `param`, which returns its
 * placeholder), `cast` after the sum as in {@link usageTotalsSql}; a constant 0 when there are none.
 */
export function subscriptionCostSql(providers: readonly string[] | undefined, param: (value: string) => string, cast = ""): string {
  if (!providers || providers.length === 0) return `0${cast} AS subscription_usd`;
  return `COALESCE(SUM(CASE WHEN provider_id IN (${providers.map(param).join(", ")}) THEN cost_usd END), 0)${cast} AS subscription_usd`;
}

/**
 * The SELECT list that {@link usageTotalsFromRow} reads back: one `COALESCE(SUM(col), 0) AS col` per
 * summed token and cost column, comma-separated. `cast` follows each sum (PostgreSQL: `::float8`).
 */
export function usageTotalsSql(cast = ""): string {
  return ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "cost_usd"].map((c) => `COALESCE(SUM(${c}), 0)${cast} AS ${c}`).join(", ");
}

/** Most buckets one series may have (a query asking for more is refused). */
export const MAX_USAGE_BUCKETS = 2000;

/**
 * Where a series' first bucket starts (ms since the epoch): `sinceMs` rounded down to a multiple of
 * `bucketMs` in the local time `offsetMs` east of UTC (0 or absent: UTC). Every later bucket starts a
 * whole number of widths after it, which is how both backends' queries group rows (`first + ((ts −
 * first) / width) * width`).
 */
export function firstBucketStart(q: Pick<UsageSeriesQuery, "sinceMs" | "bucketMs" | "offsetMs">): number {
  const width = Math.floor(q.bucketMs);
  const offset = Math.round(Number(q.offsetMs ?? 0)) || 0;
  return Math.floor((q.sinceMs + offset) / width) * width - offset;
}

/**
 * Every bucket of a series from the rows a store found (keyed by bucket start), zeros where none
 * were: the shape both backends answer.
 * @throws StoreError `invalid` for a bucket under 1 s or more than {@link MAX_USAGE_BUCKETS} buckets.
 */
export function fillUsageBuckets(q: UsageSeriesQuery, found: Map<number, Omit<UsageBucket, "t">>): UsageBucket[] {
  const width = Math.floor(q.bucketMs);
  if (!(width >= 1000)) throw new StoreError("invalid", "usage series: bucketMs must be at least 1000");
  const first = firstBucketStart(q);
  const count = Math.ceil((q.untilMs - first) / width);
  if (count > MAX_USAGE_BUCKETS) throw new StoreError("invalid", `usage series: more than ${MAX_USAGE_BUCKETS} buckets`);
  const out: UsageBucket[] = [];
  for (let t = first; t < q.untilMs; t += width) {
    out.push({ t, ...(found.get(t) ?? { requests: 0, errors: 0, refused: 0, fallbacks: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0, subscriptionUsd: 0 }) });
  }
  return out;
}

/** Usage rows and route traces: written through buffers, read by the reporting commands. */
export interface UsageStore extends UsageSink, TraceSink {
  /** Appends a usage row to the write buffer. Never blocks, never throws. */
  record(rec: UsageRecord): void;
  /** Appends a route trace to the write buffer (kept in a bounded ring). Never blocks, never throws. */
  save(trace: RouteTrace): void;

  /** Writes every buffered row now, in one transaction. Flush failures are counted, not thrown. */
  flush(): Awaitable<void>;

  /** Usage per group since a time, most requests first (pending rows are flushed first). */
  usageSummary(q: UsageQuery): Awaitable<UsageSummaryRow[]>;
  /**
   * Usage over time (SPEC 9.4 charts): every bucket of the query, zeros included, oldest first
   * (pending rows are flushed first). @throws StoreError `invalid` (see {@link fillUsageBuckets}).
   */
  usageSeries(q: UsageSeriesQuery): Awaitable<UsageBucket[]>;
  /** The most recent requests, newest first, optionally filtered (pending rows are flushed first). */
  recentCalls(limit: number, q?: CallsQuery): Awaitable<CallRow[]>;
  /**
   * One page of requests, newest first, filtered, before or after a cursor, with the cursors of the
   * neighbouring pages (pending rows are flushed first): keyset paging over the `usage_ts` index, so a
   * page far back costs what the first one does.
   */
  callsPage(q: CallsPageQuery): Awaitable<CallsPage>;
  /** The trace with this route id (`sy_…`), or else the newest trace with this request id. */
  getTrace(id: string): Awaitable<RouteTrace | undefined>;
  /** The most recent traces, newest first. */
  recentTraces(limit: number): Awaitable<RouteTrace[]>;
  /**
   * Deletes usage rows older than `beforeMs` (ms since the epoch), oldest first, at most `limit` of them
   * (every one when absent): `settings.usage_retention_days` deletes in batches (src/store/usage-retention.ts)
   * so that a large prune never holds SQLite's one writer (and the event loop) for long.
   * @returns rows deleted
   */
  pruneUsage(beforeMs: number, limit?: number): Awaitable<number>;
  /**
   * Requests recorded per served `provider/model` (the grouping of `usageSummary` by `model`; rows no
   * model served are left out): least-used's seed (SPEC 5.1). With `only`, of those pairs alone (the
   * least-used targets'; an empty set reads nothing), so the map holds no more entries than `only` however
   * many model names clients had served. Counts the rows in the table when called (after a flush); rows
   * written meanwhile are not counted. Never holds the event loop for a whole table: SQLite reads it in
   * slices of rows by id, the event loop free between slices.
   */
  servedPerModel(only?: ReadonlySet<string>): Promise<Map<string, number>>;
}
