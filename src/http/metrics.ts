/**
 * `GET /metrics` (SPEC O-3) in the Prometheus text exposition format, on prom-client.
 *
 * Counting happens once per request in `finish` (src/app.ts), from the usage record the request
 * produced: a few counter increments and two histogram observations into plain per-series numbers
 * ({@link LabelledCounter}, {@link LabelledHistogram}); prom-client's registry formats them when
 * scraped, together with its own gauges for live state. The work is O(1) and independent of the
 * reply's length (the reply's byte count is a number the reply stream, pipeline/re-translate.ts
 * `replyStream`, adds up and hands over at the end). Live state — cooldowns, open circuits, the
 * store's buffers, requests in flight, RSS — is read when a scraper asks, never on the hot path.
 *
 * Labels carry endpoint names, provider ids, model names and outcomes only: never keys, account
 * credentials or client-chosen free text other than the resolved upstream model, whose control
 * characters are replaced ({@link labelValue}).
 *
 * Guard: a local caller (loopback peer, no forwarding headers) reads `/metrics` without a key, like
 * `/health`; a remote caller needs a key with the `admin` scope or the instance's admin token.
 */
import { Elysia } from "elysia";
// The classes from their own modules, not the package index (see src/types/prom-client-lib.d.ts).
import Counter from "prom-client/lib/counter";
import Gauge from "prom-client/lib/gauge";
import Registry from "prom-client/lib/registry";
import { isRemote, type Endpoint } from "../../pipeline/index.ts";
import type { Account, AttemptTrace, UsageRecord } from "../../pipeline/ports.ts";
import { adminAccess } from "../admin/access.ts";
import type { AdminDeps } from "../admin/admin-api.ts";
import { adminError } from "../admin/replies.ts";
import type { StoreStats } from "../store/types.ts";
import type { BrowserRefusalReason } from "./browser-guard.ts";
import type { BrowserSurface } from "./browser-refusals.ts";
import { buildSource, VERSION } from "../version.ts";

/** Live state the gauges read at scrape time. */
export interface MetricsSources {
  /** Accounts, provider ids and active cooldowns (AccountRegistry.snapshot). */
  accounts: () => {
    accounts: Account[];
    providers: Map<string, unknown>;
    cooldowns: Array<{ accountId: string }>;
  };
  /** A provider circuit's state (AccountRegistry.circuitState). */
  circuit: (providerId: string) => { state: "closed" | "open" | "half-open" };
  /** The store's buffer and drop counters. */
  store: () => StoreStats;
  /** Requests in flight. */
  inflight: () => number;
  /** Hands over the requests' metrics still queued to run after their replies (src/after-reply.ts) before a scrape. */
  settle?: () => void;
  /** What the alert webhook did with each alert, by event and result (src/alerts/webhook.ts `AlertWebhook.deliveryCounts`). */
  alertDeliveries?: () => Iterable<{ event: string; result: string; count: number }>;
}

/** Seconds: total request duration buckets (LLM replies run from milliseconds to minutes). */
export const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
/** Seconds: time-to-first-byte buckets. */
export const TTFB_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60];

/** Token kinds of SPEC O-1 as they appear in the `kind` label, with the usage field each reads. */
const TOKEN_KINDS = [
  ["input", "inputTokens"],
  ["output", "outputTokens"],
  ["cache_read", "cacheReadTokens"],
  ["cache_write", "cacheWriteTokens"],
  ["reasoning", "reasoningTokens"],
] as const;

/** Whether `n` may be added to a counter: a finite number above zero. */
const countable = (n: number | undefined): n is number => typeof n === "number" && n > 0 && Number.isFinite(n);

/** Provider label of a request that never reached a target (guard rejection, no route). */
export const NO_PROVIDER = "none";

/**
 * At most this many (provider, model) pairs get their own `switchyard_tokens_total` series; later new
 * pairs count under the model label {@link OTHER_MODEL}. The model is the one sent upstream, which a
 * provider that accepts any name (`openai/random-1`, `openai/random-2`, …) lets a client choose, and
 * every new series would stay in memory and in each scrape for the process's life.
 */
export const MAX_MODEL_SERIES = 500;
/** The model label of token counts beyond {@link MAX_MODEL_SERIES} distinct (provider, model) pairs. */
export const OTHER_MODEL = "other";

/**
 * Characters a label value never carries raw: the C0 controls but LF (which the text format writes as
 * `\n`), DEL, the C1 controls (NEL among them) and the Unicode line and paragraph separators. The text
 * format escapes only `\`, `"` and LF in a label value, so a raw CR, vertical tab, form feed, NEL,
 * U+2028 or U+2029 there ends a line for a parser that splits at those (Python's `str.splitlines`, a
 * `\r?\n` split) and the rest of the line is read as junk.
 */
const UNSAFE_IN_LABEL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * `value` as a label value may carry it in the exposition: each character of {@link UNSAFE_IN_LABEL}
 * replaced by U+FFFD (the replacement character); the same string when it has none. Two names that
 * differ only there share a series.
 */
export function labelValue(value: string): string {
  UNSAFE_IN_LABEL.lastIndex = 0;
  return UNSAFE_IN_LABEL.test(value) ? value.replace(UNSAFE_IN_LABEL, "\uFFFD") : value;
}

/** Label values of one series, in the metric's label-name order. */
type LabelSet<L extends string> = Record<L, string>;

/** Series found label by label: one map per label, keyed by the label's value (GatewayMetrics.observe). */
type Nested<V> = Map<string, V>;

/** The map under `key` in `outer`, created empty on first use. */
function inner<V>(outer: Nested<Nested<V>>, key: string): Nested<V> {
  let m = outer.get(key);
  if (m === undefined) outer.set(key, (m = new Map()));
  return m;
}

/** The series one request of an endpoint, provider and outcome counts in. */
interface RequestSeries {
  requests: { value: number };
  duration: HistogramSeries;
  ttfb: HistogramSeries;
  fallbacks: { value: number };
  bytes: { value: number };
}

/**
 * A metric family whose series live in a Map keyed by their label values, created on first use and
 * read by prom-client's registry through `get()` (as it reads its own metrics). The request path looks
 * a series up once per label set and then only does arithmetic on it: prom-client's own classes hash
 * the label object on every `inc`/`observe`, even through a `labels()` child (~1 µs each, 7–9 per
 * request).
 */
abstract class SeriesFamily<L extends string, S extends object> {
  readonly aggregator = "sum";
  protected readonly series = new Map<string, S & { labels: LabelSet<L> }>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** A fresh series (all zero). */
  protected abstract fresh(): S;

  /** Sets a series back to zero, in place. */
  protected abstract zero(series: S): void;

  /** The series of `labels`, created on first use; `key` must identify the label values. */
  child(key: string, labels: () => LabelSet<L>): S {
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = Object.assign(this.fresh(), { labels: labels() })));
    return s;
  }

  /**
   * Zeroes every series (prom-client's `Registry.resetMetrics`). In place: callers keep the series
   * objects they looked up, and a zeroed series is left out of the exposition until it counts again.
   */
  reset(): void {
    for (const s of this.series.values()) this.zero(s);
  }
}

/** A counter family ({@link SeriesFamily}); a series is `{ value }`, incremented by the caller. */
export class LabelledCounter<L extends string> extends SeriesFamily<L, { value: number }> {
  readonly type = "counter";

  protected fresh() {
    return { value: 0 };
  }

  protected zero(s: { value: number }): void {
    s.value = 0;
  }

  /** prom-client's metric read (name, help, type, values); series never incremented are left out. */
  get() {
    const values = [...this.series.values()].filter((s) => s.value !== 0).map((s) => ({ labels: { ...s.labels }, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** One histogram series: observations per bucket (not cumulative; the last slot is +Inf), sum, count. */
export interface HistogramSeries {
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram family ({@link SeriesFamily}): `observe` finds the bucket (a linear scan of ≤ 16 bounds)
 * and bumps three numbers. Buckets are upper bounds in the metric's unit, `le` inclusive as Prometheus
 * defines them; the exposition's `_bucket` values are made cumulative when read.
 */
export class LabelledHistogram<L extends string> extends SeriesFamily<L, HistogramSeries> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    readonly buckets: readonly number[],
  ) {
    super(name, help);
  }

  protected fresh(): HistogramSeries {
    return { counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  protected zero(s: HistogramSeries): void {
    s.counts.fill(0);
    s.sum = 0;
    s.count = 0;
  }

  /** Records `value` (in the buckets' unit) in `series`. */
  observe(series: HistogramSeries, value: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    series.counts[i]!++;
    series.sum += value;
    series.count++;
  }

  /** prom-client's metric read: `_bucket` (cumulative, `le` last), `_sum` and `_count` per series observed. */
  get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.series.values()) {
      if (s.count === 0) continue;
      let acc = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { ...s.labels, le: i < this.buckets.length ? this.buckets[i]! : "+Inf" }, value: acc, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * The token series of one counter family ({@link LabelledCounter} labelled provider, model, kind), one
 * per entry of TOKEN_KINDS per (provider, model) pair; past {@link MAX_MODEL_SERIES} pairs a new pair
 * shares its provider's {@link OTHER_MODEL} series.
 */
class TokenSeries {
  private readonly perModel: Nested<Nested<Array<{ value: number }>>> = new Map();
  /** (provider, model) pairs in {@link perModel}. */
  private modelPairs = 0;
  private readonly perProviderOther = new Map<string, Array<{ value: number }>>();

  constructor(readonly counter: LabelledCounter<"provider" | "model" | "kind">) {}

  /** The series of `provider` and `model`, in TOKEN_KINDS order, created on first use. */
  of(provider: string, model: string): Array<{ value: number }> {
    const byModel = this.perModel.get(provider);
    const found = byModel?.get(model);
    if (found !== undefined) return found;
    if (this.modelPairs >= MAX_MODEL_SERIES) return this.other(provider);
    const s = this.make(provider, model);
    (byModel ?? inner(this.perModel, provider)).set(model, s);
    this.modelPairs++;
    return s;
  }
  private other(provider: string): Array<{ value: number }> {
    let s = this.perProviderOther.get(provider);
    if (s === undefined) this.perProviderOther.set(provider, (s = this.make(provider, OTHER_MODEL)));
    return s;
  }
  /** The series of `provider` and `model` (its label value: {@link labelValue}, a client may choose it), one per TOKEN_KINDS entry. */
  private make(provider: string, rawModel: string): Array<{ value: number }> {
    const model = labelValue(rawModel);
    const key = provider + "\u0000" + model;
    return TOKEN_KINDS.map(([kind]) => this.counter.child(key + "\u0000" + kind, () => ({ provider, model, kind })));
  }
}

/** The gateway's Prometheus metrics: one registry per instance (tests run several in one process). */
export class GatewayMetrics {
  /** The prom-client registry holding every metric below. */
  readonly registry = new Registry();
  private readonly requests = new LabelledCounter<"endpoint" | "provider" | "outcome">("switchyard_requests_total", "Requests finished, by client endpoint, serving provider and outcome.");
  private readonly duration = new LabelledHistogram<"endpoint" | "provider" | "outcome">(
    "switchyard_request_duration_seconds",
    "Time from arrival to the last byte (or the error), in seconds.",
    DURATION_BUCKETS,
  );
  private readonly ttfb = new LabelledHistogram<"endpoint" | "provider" | "outcome">(
    "switchyard_time_to_first_byte_seconds",
    "Time from arrival to the first reply byte of committed replies, in seconds.",
    TTFB_BUCKETS,
  );
  private readonly attempts = new LabelledCounter<"endpoint" | "provider" | "result">(
    "switchyard_upstream_attempts_total",
    "Upstream attempts (every retry and fallback counts), by the provider tried and the result: ok, or the classification row of the failure.",
  );
  private readonly fallbacks = new LabelledCounter<"endpoint" | "provider">("switchyard_fallbacks_total", "Requests served by a fallback (not the first choice of target or account).");
  private readonly tokens = new LabelledCounter<"provider" | "model" | "kind">(
    "switchyard_tokens_total",
    `Tokens as the provider reported them (kind: input, output, cache_read, cache_write, reasoning); replies whose provider reported none count in switchyard_estimated_tokens_total instead; models beyond the first ${MAX_MODEL_SERIES} (provider, model) pairs count as model="${OTHER_MODEL}".`,
  );
  private readonly estimatedTokens = new LabelledCounter<"provider" | "model" | "kind">(
    "switchyard_estimated_tokens_total",
    `Tokens the gateway estimated for replies whose provider reported no usage (their usage rows marked estimated), by the same labels as switchyard_tokens_total; models beyond the first ${MAX_MODEL_SERIES} (provider, model) pairs count as model="${OTHER_MODEL}".`,
  );
  /** Series of {@link tokens} (provider-reported) and {@link estimatedTokens}. */
  private readonly reported = new TokenSeries(this.tokens);
  private readonly estimated = new TokenSeries(this.estimatedTokens);
  private readonly bytes = new LabelledCounter<"endpoint" | "provider">("switchyard_stream_bytes_sent_total", "Reply body bytes handed to clients after the commit point (streamed and whole replies).");
  private readonly browserRefusals = new LabelledCounter<"reason" | "surface">(
    "switchyard_browser_refusals_total",
    "Requests the browser rules (Host, Origin, CORS) refused before anything else ran, by reason (host: a Host name not allowed, 421, DNS rebinding; origin: a foreign Origin without a key, 403; preflight: a CORS preflight from an origin not allowed there, 403) and surface (api, websocket, admin, dashboard, metrics, health, other).",
  );

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    for (const m of [this.requests, this.duration, this.ttfb, this.attempts, this.fallbacks, this.tokens, this.estimatedTokens, this.bytes, this.browserRefusals]) {
      // prom-client's registry reads any metric through `get()`; its types list only its own classes.
      this.registry.registerMetric(m as unknown as InstanceType<typeof Counter>);
    }

    new Gauge({
      name: "switchyard_requests_in_flight",
      help: "Requests in flight (open streams included).",
      registers,
      collect() {
        this.set(sources.inflight());
      },
    });
    new Gauge({
      name: "switchyard_cooldowns_active",
      help: "Account/model cooldowns in force, by provider.",
      labelNames: ["provider"],
      registers,
      collect() {
        const snap = sources.accounts();
        const providerOf = new Map(snap.accounts.map((a) => [a.id, a.providerId]));
        const counts = new Map<string, number>();
        for (const id of snap.providers.keys()) counts.set(id, 0);
        for (const c of snap.cooldowns) {
          const p = providerOf.get(c.accountId) ?? (c.accountId.endsWith("-keyless") ? c.accountId.slice(0, -"-keyless".length) : "unknown");
          counts.set(p, (counts.get(p) ?? 0) + 1);
        }
        this.reset();
        for (const [provider, n] of counts) this.set({ provider }, n);
      },
    });
    new Gauge({
      name: "switchyard_circuit_open",
      help: "1 while a provider's circuit is open or half-open, else 0.",
      labelNames: ["provider"],
      registers,
      collect() {
        this.reset();
        for (const id of sources.accounts().providers.keys()) this.set({ provider: id }, sources.circuit(id).state === "closed" ? 0 : 1);
      },
    });
    new Gauge({
      name: "switchyard_store_pending",
      help: "Rows buffered for the next store flush (kind: usage, traces).",
      labelNames: ["kind"],
      registers,
      collect() {
        const s = sources.store();
        this.set({ kind: "usage" }, s.pendingUsage);
        this.set({ kind: "traces" }, s.pendingTraces);
      },
    });
    new Counter({
      name: "switchyard_store_dropped_total",
      help: "Usage rows and traces dropped (buffer overflow while flushes failed, a value the database refused, after close, or unwritten at a stop while the database was away and not kept on disk either), and account state writes lost (a lock, cooldown, removal or circuit a shared database rejected, or past the embedded store's cap on refused ones).",
      registers,
      collect() {
        this.reset();
        this.inc(sources.store().dropped);
      },
    });
    new Counter({
      name: "switchyard_store_flush_errors_total",
      help: "Store flushes that failed (their rows were kept for the next one).",
      registers,
      collect() {
        this.reset();
        this.inc(sources.store().flushErrors);
      },
    });
    new Counter({
      name: "switchyard_alert_deliveries_total",
      help:
        "Alerts at the webhook, by event and result: delivered (a 2xx), dropped (queue full, refused with a 4xx, every try failed, or the webhook removed before its next try), " +
        "claimed_elsewhere (another instance on the shared store took it and finished with it: delivered, or out of tries); retried counts the tries made again after a failed one.",
      labelNames: ["event", "result"],
      registers,
      collect() {
        this.reset();
        for (const c of sources.alertDeliveries?.() ?? []) this.inc({ event: c.event, result: c.result }, c.count);
      },
    });
    new Gauge({
      name: "process_resident_memory_bytes",
      help: "Resident memory size in bytes.",
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
    new Gauge({
      name: "process_start_time_seconds",
      help: "Start time of the process since the Unix epoch, in seconds.",
      registers,
      collect() {
        this.set(startSeconds);
      },
    });
    new Gauge({ name: "switchyard_build_info", help: "Version and runtime of this instance (value 1).", labelNames: ["version", "commit", "bun"], registers }).set(
      { version: VERSION, commit: buildSource().commit ?? "unknown", bun: Bun.version },
      1,
    );
  }

  /**
   * Counts one finished request, called once from `finish`: constant work per request (its attempts
   * are at most `max_attempts`). `bytesSent` is the reply body handed to the client after the commit
   * point (undefined when nothing was committed); `attempts` the route trace's upstream attempts.
   *
   * Every series is found through maps nested by label, one `Map.get` per label value (endpoint,
   * provider, outcome; the attempt's result; the model), never through a key string concatenated per
   * request: the label strings are the request's own (constants, the configuration's provider ids, the
   * record's model), whose hashes JavaScriptCore keeps, where a concatenated key would be flattened and
   * hashed on every lookup (docs/performance.md item 120).
   */
  observe(endpoint: Endpoint, rec: UsageRecord, bytesSent: number | undefined, attempts: readonly AttemptTrace[] = []): void {
    const provider = rec.providerId ?? NO_PROVIDER;
    const outcome = rec.outcome;
    const req = this.requestSeries(endpoint, provider, outcome);
    req.requests.value++;
    this.duration.observe(req.duration, rec.totalMs / 1000);
    if (rec.ttfbMs !== undefined) this.ttfb.observe(req.ttfb, rec.ttfbMs / 1000);
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i]!;
      const result = a.classification ?? (a.status !== undefined && a.status < 400 ? "ok" : "failed");
      this.attemptSeries(endpoint, a.providerId, result).value++;
    }
    if (rec.fallback) req.fallbacks.value++;
    if (countable(bytesSent)) req.bytes.value += bytesSent;
    const model = rec.model;
    const split = rec.split;
    if (split === undefined) {
      if (model !== undefined) this.countTokens(rec.estimated ? this.estimated : this.reported, provider, model, rec.usage);
      return;
    }
    // SPEC 9.5, O-1: failed attempts' billed usage counts under their own provider and model (as the
    // provider reported it), the served reply's share under the row's (src/limits/accounting.ts addBilled).
    if (model !== undefined) this.countTokens(rec.estimated ? this.estimated : this.reported, provider, model, split.served.usage);
    for (const b of split.billed) this.countTokens(this.reported, b.providerId, b.model, b.usage);
  }

  /** Adds usage `u`'s token counts to the series of `provider` and `model` (created on the first count). */
  private countTokens(kind: TokenSeries, provider: string, model: string, u: UsageRecord["usage"]): void {
    let series: Array<{ value: number }> | undefined;
    for (let i = 0; i < TOKEN_KINDS.length; i++) {
      const n = u[TOKEN_KINDS[i]![1]];
      // A provider's negative or non-finite count would make a counter go down or stick at +Inf.
      if (!countable(n)) continue;
      // A row marked estimated (the provider reported no usage, SPEC O-1) counts apart from reported tokens.
      series ??= kind.of(provider, model);
      series[i]!.value += n;
    }
  }

  /** The series one request touches, by endpoint, provider and outcome (looked up once per request). */
  private readonly perRequest: Nested<Nested<Nested<RequestSeries>>> = new Map();
  private requestSeries(endpoint: Endpoint, provider: string, outcome: string): RequestSeries {
    return this.perRequest.get(endpoint)?.get(provider)?.get(outcome) ?? this.newRequestSeries(endpoint, provider, outcome);
  }
  private newRequestSeries(endpoint: Endpoint, provider: string, outcome: string): RequestSeries {
    const labels = () => ({ endpoint, provider, outcome });
    const ep = endpoint + "\u0000" + provider;
    const key = ep + "\u0000" + outcome;
    const s: RequestSeries = {
      requests: this.requests.child(key, labels),
      duration: this.duration.child(key, labels),
      ttfb: this.ttfb.child(key, labels),
      fallbacks: this.fallbacks.child(ep, () => ({ endpoint, provider })),
      bytes: this.bytes.child(ep, () => ({ endpoint, provider })),
    };
    inner(inner(this.perRequest, endpoint), provider).set(outcome, s);
    return s;
  }

  /** The attempts series by endpoint, provider tried and result. */
  private readonly perAttempt: Nested<Nested<Nested<{ value: number }>>> = new Map();
  private attemptSeries(endpoint: Endpoint, provider: string, result: string): { value: number } {
    return this.perAttempt.get(endpoint)?.get(provider)?.get(result) ?? this.newAttemptSeries(endpoint, provider, result);
  }
  /**
   * {@link attemptSeries} made (the first attempt of its labels): a method of its own, so that its label
   * callback (which holds the labels) does not make every lookup allocate their scope (JavaScriptCore
   * makes a function's captured variables at its entry: docs/performance.md item 255).
   */
  private newAttemptSeries(endpoint: Endpoint, provider: string, result: string): { value: number } {
    const s = this.attempts.child(endpoint + "\u0000" + provider + "\u0000" + result, () => ({ endpoint, provider, result }));
    inner(inner(this.perAttempt, endpoint), provider).set(result, s);
    return s;
  }

  /**
   * Counts one request the browser rules refused (src/http/browser-refusals.ts), by its reason and the
   * surface it asked for; both labels come from fixed lists, so the series stay at most 3 x 7.
   */
  browserRefusal(reason: BrowserRefusalReason, surface: BrowserSurface): void {
    this.browserRefusals.child(reason + "\u0000" + surface, () => ({ reason, surface })).value++;
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    this.sources.settle?.();
    return this.registry.metrics();
  }

  /** The Content-Type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Why a request may not read /metrics, or undefined when it may: local callers always; remote ones need
 * the instance's admin token or a key with the admin scope (the admin API's rule, src/admin/access.ts,
 * with keys always required and no dashboard cookie): a valid key without that scope gets a 403 naming
 * the key, a missing or wrong one a 401 (README "Access").
 */
export function metricsRefusal(request: Request, peer: string | undefined, auth: Pick<AdminDeps, "keys" | "adminToken">): { status: 401 | 403; message: string } | undefined {
  if (!isRemote(peer, request.headers)) return undefined;
  const decision = adminAccess(request, peer, { keys: auth.keys, adminToken: auth.adminToken, requireApiKey: () => true, surface: "/metrics" });
  return decision.ok ? undefined : { status: decision.status, message: decision.message };
}

/** The `GET /metrics` route as an Elysia plugin. */
export function metricsRoute(metrics: GatewayMetrics, auth: Pick<AdminDeps, "keys" | "adminToken">) {
  return new Elysia().get("/metrics", async ({ request, server }) => {
    const peer = (server as { requestIP(r: Request): { address: string } | null } | null)?.requestIP(request)?.address;
    const refusal = metricsRefusal(request, peer, auth);
    if (refusal !== undefined) return adminError(refusal.status, refusal.message);
    return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
  });
}
