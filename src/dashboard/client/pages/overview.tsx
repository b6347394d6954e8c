/**
 * Overview (SPEC 9.4): requests, errors, fallbacks, tokens and cost over the last hour or day as
 * charts, the live request rate and the requests in flight (the account slots in use, re-read on every
 * finished request and every 5 s). The request rate chart starts from the server's 10 s usage buckets
 * of the last 30 minutes (`GET /admin/api/usage?since=30m&bucket=10s`, the usage store: every request
 * made before the page opened, on every instance sharing the store), re-read every minute and after a
 * reconnect, and its last minute (`since=1m`) every 10 s, so other instances' requests appear within
 * about 10 s; between reads this instance's request_finished events add to it. The Request rate tile
 * is the chart's last minute (its newest six buckets), so tile and chart agree; it reads "–" until the
 * usage store answered and while its last read failed (a database outage). The alerts this
 * instance raised lately are listed under the tiles (./recent-alerts.tsx).
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { Card, Empty, ErrorLine, Stat, TimeChart, useData, useDebounced, useNow, type ChartSeries } from "../components.tsx";
import { count, pct, perBucket, tzOffsetMinutes, usd } from "../format.ts";
import { useLive } from "../live.ts";
import { spentUsd } from "../../../limits/dollars.ts";
import type { AccountsStatus, UsageAnswer, UsageBucket } from "../types.ts";
import { RecentAlerts } from "./recent-alerts.tsx";
import { SetupSnippets } from "./setup.tsx";

const RANGES = [
  { id: "1h", label: "Last hour", bucket: "1m" },
  { id: "24h", label: "Last day", bucket: "1h" },
] as const;

/** The request rate chart: 10 s buckets over the last 30 minutes. */
const RATE_BUCKET_MS = 10_000;
const RATE_SPAN = "30m";
const RATE_SPAN_MS = 30 * 60_000;
/** What the 10 s re-read asks for: the last minute's buckets (other instances' requests). */
const RATE_RECENT = "1m";

/**
 * Outcomes the usage store counts as errors (src/store/sqlite/usage.ts): failures, not the gateway's own
 * refusals (`rejected`: key limits, a disabled or missing key), which are counted apart as Refused.
 */
const ERROR_OUTCOMES = new Set(["error", "upstream_error"]);

/** A request seen live: the start of its 10 s bucket (by arrival, as the store buckets), when it ended, whether it failed. */
interface LiveRequest {
  t: number;
  at: number;
  error: boolean;
}

/** The request rate's stored part: 10 s buckets (by start) as the usage store last answered, and when it answered (`series.to`). */
export interface RateStore {
  to: number;
  buckets: Map<number, { requests: number; errors: number }>;
}

/**
 * `prev` with the buckets of a usage answer put in: a newer answer's buckets replace those they cover
 * (every bucket of its window is present, zeros included), older ones stay; an answer older than `prev`
 * (a slow read overtaken by a later one) only adds the buckets `prev` does not have.
 */
export function mergeRate(prev: RateStore | undefined, series: UsageAnswer["series"] | undefined): RateStore | undefined {
  if (!series) return prev;
  const older = prev !== undefined && series.to < prev.to;
  const buckets = new Map(prev?.buckets);
  for (const b of series.buckets) {
    const t = Math.floor(b.t / RATE_BUCKET_MS) * RATE_BUCKET_MS;
    if (!older || !buckets.has(t)) buckets.set(t, { requests: b.requests, errors: b.errors });
  }
  return { to: older ? prev.to : series.to, buckets };
}

/**
 * The request rate per 10 s over the last 30 minutes: the stored buckets as last read, plus the live
 * requests that ended after that read (`stored.to`, the server's clock like the events'), bucketed by
 * arrival. Every bucket present up to `now`'s.
 */
export function rateBuckets(stored: RateStore | undefined, live: readonly LiveRequest[], now: number): { t: number; requests: number; errors: number }[] {
  const last = Math.floor(now / RATE_BUCKET_MS) * RATE_BUCKET_MS;
  const first = last - RATE_SPAN_MS + RATE_BUCKET_MS;
  const out = new Map<number, { t: number; requests: number; errors: number }>();
  for (let t = first; t <= last; t += RATE_BUCKET_MS) out.set(t, { t, requests: stored?.buckets.get(t)?.requests ?? 0, errors: stored?.buckets.get(t)?.errors ?? 0 });
  const to = stored?.to ?? -Infinity;
  for (const r of live) {
    const o = r.at > to ? out.get(r.t) : undefined;
    if (o) {
      o.requests++;
      if (r.error) o.errors++;
    }
  }
  return [...out.values()];
}

/** Requests of the last minute: the newest six 10 s buckets of `rows` (the current one included). */
export function lastMinute(rows: readonly { t: number; requests: number }[]): number {
  return rows.slice(-6).reduce((n, b) => n + b.requests, 0);
}

/**
 * The cost chart's series (Usage and Overview): money spent per bucket as bars, and, when subscriptions
 * served some of the period, their use at API prices as bars beside them (not added to it).
 */
export function costSeries(buckets: readonly UsageBucket[]): ChartSeries[] {
  const spent: ChartSeries = { label: "spent", values: buckets.map((b) => spentUsd(b)), color: "#059669", bars: true, fmt: (v) => usd(v) };
  if (!buckets.some((b) => (b.subscriptionUsd ?? 0) > 0)) return [spent];
  return [spent, { label: "subscriptions at API prices", values: buckets.map((b) => b.subscriptionUsd ?? 0), color: "#a78bfa", bars: true, fmt: (v) => usd(v) }];
}

/** Sums a field over usage rows, undefined when no row has it. */
export function total(rows: UsageAnswer["rows"], f: (r: UsageAnswer["rows"][number]) => number | undefined): number | undefined {
  let sum: number | undefined;
  for (const r of rows) {
    const v = f(r);
    if (v !== undefined && Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

export function OverviewPage() {
  const [range, setRange] = useState<(typeof RANGES)[number]>(RANGES[0]);
  // The tiles add up the rows and no chart here is per model: rows by provider (one per provider, plus
  // the unserved), so the answer's size does not grow with the model names clients send (by model, a
  // soak's 2,767 random names made each read, every ≤ 2 s while requests finished, 882 KB).
  const usage = useData(() => api<UsageAnswer>(`/usage${qs({ since: range.id, by: "provider", bucket: range.bucket, tz_offset: tzOffsetMinutes() })}`), [range.id]);
  // Requests in flight (streams included) hold an account slot each until they end.
  const slots = useData(() => api<AccountsStatus>("/accounts").then((s) => s.accounts.reduce((n, a) => n + a.slots.inUse, 0)));
  useEffect(() => {
    const t = setInterval(slots.reload, 5000);
    return () => clearInterval(t);
  }, []);
  const refresh = useDebounced(usage.reload, 2000);
  // The request rate chart: the stored 10 s buckets of the last 30 minutes (every instance sharing the
  // store), re-read every minute and after a reconnect; the last minute's buckets every 10 s, so
  // requests served by other instances appear within about 10 s; this instance's requests as they finish.
  // A read that finds requests the page had not counted (another instance's) re-reads the tiles too.
  const [stored, setStored] = useState<RateStore | undefined>();
  // Whether the last read of the rate failed (a database outage): the tile then reads "–", as its
  // neighbours do, not the requests this page saw finish passed off as the last minute's (try20 D8).
  const [rateFailed, setRateFailed] = useState(false);
  const storedNow = useRef<RateStore | undefined>(undefined);
  const readRate = (since: string) => {
    void api<UsageAnswer>(`/usage${qs({ since, by: "provider", bucket: "10s" })}`)
      .then((a) => {
        setRateFailed(false);
        const prev = storedNow.current;
        const next = mergeRate(prev, a.series);
        if (!next || next === prev) return;
        storedNow.current = next;
        setStored(next);
        if (prev && a.series && a.series.to >= prev.to && a.series.buckets.some((b) => (prev.buckets.get(b.t)?.requests ?? 0) !== b.requests)) refresh();
      })
      .catch(() => setRateFailed(true)); // the next read tries again; the page's other reads show the error
  };
  useEffect(() => {
    readRate(RATE_SPAN);
    const whole = setInterval(() => readRate(RATE_SPAN), 60_000);
    const recent = setInterval(() => readRate(RATE_RECENT), RATE_BUCKET_MS);
    return () => {
      clearInterval(whole);
      clearInterval(recent);
    };
  }, []);
  // Requests that finished since the last read: the chart takes them in at the next 1 s tick (so a
  // burst redraws it once a second, not once per request).
  const liveRequests = useRef<LiveRequest[]>([]);
  const now = useNow();
  const refreshSlots = useDebounced(slots.reload, 500);
  useLive((e) => {
    if (e.type === "request_finished") {
      const start = e.at - (e.latencyMs || 0);
      liveRequests.current.push({ t: Math.floor(start / RATE_BUCKET_MS) * RATE_BUCKET_MS, at: e.at, error: ERROR_OUTCOMES.has(e.outcome) });
      refreshSlots();
      refresh();
    } else if (e.type === "hello") {
      usage.reload();
      slots.reload();
      readRate(RATE_SPAN);
    }
  });
  const rateRows = useMemo(() => {
    // What the last read holds, or what is older than the chart, is dropped.
    const to = stored?.to ?? -Infinity;
    liveRequests.current = liveRequests.current.filter((r) => r.at > to && r.at > now - RATE_SPAN_MS);
    return rateBuckets(stored, liveRequests.current, now);
  }, [stored, now]);
  const rateTimes = useMemo(() => rateRows.map((b) => b.t), [rateRows]);
  const rateLines = useMemo(
    () => [
      { label: "requests / 10 s", values: rateRows.map((b) => b.requests), color: "#3b6ef5", bars: true },
      { label: "errors", values: rateRows.map((b) => b.errors), color: "#dc2626" },
    ],
    [rateRows],
  );
  const rateTotal = rateRows.reduce((n, b) => n + b.requests, 0);
  // Until the usage store has answered (or while it cannot: a database outage), the tiles read "–":
  // a 0 there read as "no traffic" beside the outage banner (newuser12a's tryout, G19).
  const known = usage.data !== undefined;
  const rows = usage.data?.rows ?? [];
  const buckets = usage.data?.series?.buckets ?? [];
  const times = buckets.map((b) => b.t);
  // each time starts a bucket of this width: the charts draw every value across its bucket (newuser12a G13)
  const bucketMs = usage.data?.series?.bucketMs;
  const requests = total(rows, (r) => r.requests) ?? 0;
  const errors = total(rows, (r) => r.errors) ?? 0;
  // The gateway's own refusals (key limits 429, disabled key 403, no or wrong key 401) apart from
  // failures: a lead tells "providers failing" from "my limits working" (try18 D11).
  const refused = total(rows, (r) => r.refused) ?? 0;
  const fallbacks = total(rows, (r) => r.fallbacks) ?? 0;
  const tokensIn = total(rows, (r) => r.inputTokens) ?? 0;
  const tokensOut = total(rows, (r) => r.outputTokens) ?? 0;
  // prompt cache reads and writes are tokens too (the Tokens chart and Usage count them; the tile left
  // out 28.8k of them beside 19.2k in and out: newuser12b's tryout)
  const tokensCache = (total(rows, (r) => r.cacheReadTokens) ?? 0) + (total(rows, (r) => r.cacheWriteTokens) ?? 0);
  const cost = total(rows, (r) => r.costUsd);
  // Money spent apart from subscriptions' use at API prices (their cost is the equivalent, not a bill:
  // the tile added the two, newuser12b's tryout); an older server without the split gives the sum.
  const spent = usage.data?.cost?.spentUsd ?? cost;
  const subscriptionValue = usage.data?.cost?.subscriptionUsd ?? 0;
  const unpriced = total(rows, (r) => r.unpriced) ?? 0;
  // A cost chart only when something had a price: requests of unpriced models count as $0 in the
  // buckets, and an all-zero chart read as "nothing spent" (with a 0–100 axis).
  const hasCost = buckets.some((b) => (b.costUsd ?? 0) > 0);
  // Nothing priced but requests without a price: the cost is unknown, not $0.
  const costUnknown = unpriced > 0 && !((cost ?? 0) > 0);
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Overview</h1>
          <p class="muted">What went through this gateway, and what is going through it now.</p>
        </div>
        <div class="seg" role="tablist">
          {RANGES.map((r) => (
            <button key={r.id} type="button" class={r.id === range.id ? "on" : ""} onClick={() => setRange(r)}>
              {r.label}
            </button>
          ))}
        </div>
      </header>
      <ErrorLine error={usage.error} />
      <div class="stats">
        <Stat label="Requests" value={known ? count(requests) : "–"} sub={range.label.toLowerCase()} />
        <Stat
          label="Errors"
          value={known ? count(errors) : "–"}
          sub={
            requests ? (
              <>
                <span class="nowrap">{pct(errors / requests)}</span> of requests
                {refused > 0 && (
                  <>
                    {" "}·{" "}
                    <span class="nowrap" data-refused={refused} title="Requests the gateway refused itself (key limits 429, a disabled key 403, no or a wrong key 401, a body it refused): not errors">
                      {count(refused)} refused
                    </span>
                  </>
                )}
              </>
            ) : (
              "–"
            )
          }
          tone={errors ? "bad" : undefined}
        />
        <Stat label="Fallbacks" value={known ? count(fallbacks) : "–"} sub={requests ? <><span class="nowrap">{pct(fallbacks / requests)}</span> of requests</> : "–"} tone={fallbacks ? "warn" : undefined} />
        {/* a narrow tile wraps between "in" and "out", never inside a figure */}
        <Stat
          label="Tokens"
          value={known ? count(tokensIn + tokensOut + tokensCache) : "–"}
          sub={
            known ? (
              <>
                <span class="nowrap">{count(tokensIn)} in</span> · <span class="nowrap">{count(tokensOut)} out</span>
                {tokensCache > 0 && (
                  <>
                    {" "}· <span class="nowrap">{count(tokensCache)} cache</span>
                  </>
                )}
              </>
            ) : (
              "–"
            )
          }
        />
        <Stat
          label="Cost"
          value={!known || costUnknown ? "–" : usd(spent)}
          sub={
            <>
              {subscriptionValue > 0 ? (
                <span class="subscription-value">
                  spent; subscriptions' use: <span class="nowrap">{usd(subscriptionValue)}</span> at API prices, not billed
                </span>
              ) : unpriced ? null : (
                "at API prices"
              )}
              {unpriced ? `${subscriptionValue > 0 ? "; " : ""}${count(unpriced)} requests unpriced` : null}
            </>
          }
        />
        <Stat
          label="Request rate"
          value={stored && !rateFailed ? `${count(lastMinute(rateRows))}/min` : "–"}
          sub={rateFailed ? "unavailable: the usage store does not answer" : "live, last minute"}
        />
        <Stat label="Active streams" value={slots.data === undefined ? "–" : count(slots.data)} sub="requests upstream now" />
      </div>
      {usage.data && requests === 0 && (
        <Card>
          <Empty title="No traffic yet">
            <p>Nothing went through this gateway {range.id === "1h" ? "in the last hour" : "in the last day"}. Point an agent at it:</p>
          </Empty>
          <SetupSnippets compact />
        </Card>
      )}
      <RecentAlerts />
      {stored && rateTotal > 0 && (
        <Card title="Request rate, last 30 minutes" class="rate-card">
          <div data-rate-total={rateTotal}>
            {/* each time starts a 10 s bucket: errors as steps and requests as bars across their bucket, as
                the charts below draw theirs (it drew lines sloping from one bucket to the next; G13) */}
            <TimeChart times={rateTimes} bucketMs={RATE_BUCKET_MS} series={rateLines} height={160} />
          </div>
        </Card>
      )}
      {requests > 0 && buckets.length > 0 && (
        <div class="grid-2">
          <Card title={`Requests ${perBucket(range.bucket)}`}>
            <TimeChart
              times={times}
              bucketMs={bucketMs}
              series={[
                { label: "requests", values: buckets.map((b) => b.requests), color: "#3b6ef5", bars: true },
                { label: "errors", values: buckets.map((b) => b.errors), color: "#dc2626" },
                { label: "refused", values: buckets.map((b) => b.refused ?? 0), color: "#7c3aed" },
                { label: "fallbacks", values: buckets.map((b) => b.fallbacks), color: "#d97706" },
              ]}
            />
          </Card>
          <Card title={`Tokens ${perBucket(range.bucket)}`}>
            <TimeChart
              times={times}
              bucketMs={bucketMs}
              series={[
                { label: "input (uncached)", values: buckets.map((b) => b.inputTokens), color: "#0891b2" },
                { label: "output", values: buckets.map((b) => b.outputTokens), color: "#7c3aed" },
                { label: "cache read", values: buckets.map((b) => b.cacheReadTokens), color: "#16a34a" },
                // the Usage page's four series (newuser14 K6: cache writes were left out here)
                { label: "cache write", values: buckets.map((b) => b.cacheWriteTokens), color: "#d97706" },
              ]}
            />
          </Card>
          {hasCost && (
            <Card title={`Cost (USD) ${perBucket(range.bucket)}${subscriptionValue > 0 ? ": spent, and subscriptions' use at API prices beside it" : ""}`}>
              <TimeChart times={times} bucketMs={bucketMs} series={costSeries(buckets)} />
            </Card>
          )}
        </div>
      )}
      {requests > 0 && buckets.length === 0 && <p class="muted">This gateway's admin API reports totals but no time series.</p>}
    </div>
  );
}
