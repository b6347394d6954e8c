/**
 * `GET /metrics` (SPEC O-3) in the Prometheus text exposition format, on prom-client.
 *
 * Counting happens once per request in `finish` (src/app.ts), from the usage record the request
 * produced: a few counter increments and two histogram observations, O(1) and independent of the
 * reply's length (the reply's byte count is a number the reply stream, pipeline/re-translate.ts
 * `replyStream`, adds up and hands over at the end). Live state — cooldowns, open circuits, the
 * store's buffers, requests in flight, RSS — is read when a scraper asks, never on the hot path.
 *
 * Labels carry endpoint names, provider ids, model names and outcomes only: never keys, account
 * credentials or client-chosen free text other than the resolved upstream model.
 *
 * Guard: a local caller (loopback peer, no forwarding headers) reads `/metrics` without a key, like
 * `/health`; a remote caller needs a key with the `admin` scope or the instance's admin token.
 */
import { Elysia } from "elysia";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { isRemote, type Endpoint } from "../pipeline/context.ts";
import type { Account, AttemptTrace, UsageRecord } from "../pipeline/ports.ts";
import { adminAllowed, type AdminDeps } from "./admin.ts";
import type { StoreStats } from "./store/types.ts";
import { VERSION } from "./version.ts";

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

/** Provider label of a request that never reached a target (guard rejection, no route). */
export const NO_PROVIDER = "none";

/** The gateway's Prometheus metrics: one registry per instance (tests run several in one process). */
export class GatewayMetrics {
  /** The prom-client registry holding every metric below. */
  readonly registry = new Registry();
  private readonly requests: Counter<"endpoint" | "provider" | "outcome">;
  private readonly duration: Histogram<"endpoint" | "provider" | "outcome">;
  private readonly ttfb: Histogram<"endpoint" | "provider" | "outcome">;
  private readonly attempts: Counter<"endpoint" | "provider" | "result">;
  private readonly fallbacks: Counter<"endpoint" | "provider">;
  private readonly tokens: Counter<"provider" | "model" | "kind">;
  private readonly bytes: Counter<"endpoint" | "provider">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    const reqLabels = ["endpoint", "provider", "outcome"] as const;
    this.requests = new Counter({ name: "switchyard_requests_total", help: "Requests finished, by client endpoint, serving provider and outcome.", labelNames: reqLabels, registers });
    this.duration = new Histogram({ name: "switchyard_request_duration_seconds", help: "Time from arrival to the last byte (or the error), in seconds.", labelNames: reqLabels, buckets: DURATION_BUCKETS, registers });
    this.ttfb = new Histogram({ name: "switchyard_time_to_first_byte_seconds", help: "Time from arrival to the first reply byte of committed replies, in seconds.", labelNames: reqLabels, buckets: TTFB_BUCKETS, registers });
    this.attempts = new Counter({
      name: "switchyard_upstream_attempts_total",
      help: "Upstream attempts (every retry and fallback counts), by the provider tried and the result: ok, or the classification row (SPEC 6.3) of the failure.",
      labelNames: ["endpoint", "provider", "result"],
      registers,
    });
    this.fallbacks = new Counter({ name: "switchyard_fallbacks_total", help: "Requests served by a fallback (not the first choice of target or account).", labelNames: ["endpoint", "provider"], registers });
    this.tokens = new Counter({ name: "switchyard_tokens_total", help: "Tokens as the provider reported them (kind: input, output, cache_read, cache_write, reasoning).", labelNames: ["provider", "model", "kind"], registers });
    this.bytes = new Counter({ name: "switchyard_stream_bytes_sent_total", help: "Reply body bytes handed to clients after the commit point (streamed and whole replies).", labelNames: ["endpoint", "provider"], registers });

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
      help: "1 while a provider's circuit is open or half-open (SPEC 6.3), else 0.",
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
      help: "Usage rows and traces dropped (buffer overflow while flushes failed, or after close).",
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
    new Gauge({ name: "switchyard_build_info", help: "Version and runtime of this instance (value 1).", labelNames: ["version", "bun"], registers }).set(
      { version: VERSION, bun: Bun.version },
      1,
    );
  }

  /**
   * Counts one finished request, called once from `finish`: constant work per request (its attempts
   * are at most `max_attempts`). `bytesSent` is the reply body handed to the client after the commit
   * point (undefined when nothing was committed); `attempts` the route trace's upstream attempts.
   */
  observe(endpoint: Endpoint, rec: UsageRecord, bytesSent: number | undefined, attempts: readonly AttemptTrace[] = []): void {
    const provider = rec.providerId ?? NO_PROVIDER;
    const ep = endpoint + "\u0000" + provider;
    const req = this.bound("r\u0000" + ep + "\u0000" + rec.outcome, () => {
      const labels = { endpoint, provider, outcome: rec.outcome };
      return { requests: this.requests.labels(labels), duration: this.duration.labels(labels), ttfb: this.ttfb.labels(labels) };
    });
    req.requests.inc();
    req.duration.observe(rec.totalMs / 1000);
    if (rec.ttfbMs !== undefined) req.ttfb.observe(rec.ttfbMs / 1000);
    for (const a of attempts) {
      const result = a.classification ?? (a.status !== undefined && a.status < 400 ? "ok" : "failed");
      this.bound("a\u0000" + endpoint + "\u0000" + a.providerId + "\u0000" + result, () => this.attempts.labels({ endpoint, provider: a.providerId, result })).inc();
    }
    if (rec.fallback) this.bound("f\u0000" + ep, () => this.fallbacks.labels({ endpoint, provider })).inc();
    if (bytesSent) this.bound("b\u0000" + ep, () => this.bytes.labels({ endpoint, provider })).inc(bytesSent);
    const u = rec.usage;
    if (rec.model !== undefined) {
      for (const [kind, field] of TOKEN_KINDS) {
        const n = u[field];
        if (n) this.bound("t\u0000" + provider + "\u0000" + rec.model + "\u0000" + kind, () => this.tokens.labels({ provider, model: rec.model!, kind })).inc(n);
      }
    }
  }

  /**
   * prom-client hashes a label object on every `inc`/`observe`; the label-bound children are looked up
   * once per label set and kept here (keyed by metric and label values; same cardinality as the metrics).
   */
  private readonly children = new Map<string, unknown>();
  private bound<T>(key: string, make: () => T): T {
    let c = this.children.get(key) as T | undefined;
    if (c === undefined) this.children.set(key, (c = make()));
    return c;
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Whether a request may read /metrics: local callers always; remote ones with an admin-scoped key. */
export function metricsAllowed(request: Request, peer: string | undefined, auth: Pick<AdminDeps, "keys" | "adminToken">): boolean {
  if (!isRemote(peer, request.headers)) return true;
  return adminAllowed(request, peer, { ...auth, requireApiKey: () => true });
}

/** The `GET /metrics` route as an Elysia plugin. */
export function metricsRoute(metrics: GatewayMetrics, auth: Pick<AdminDeps, "keys" | "adminToken">) {
  return new Elysia().get("/metrics", async ({ request, server }) => {
    const peer = (server as { requestIP(r: Request): { address: string } | null } | null)?.requestIP(request)?.address;
    if (!metricsAllowed(request, peer, auth)) {
      return new Response(
        JSON.stringify({ error: { message: "Remote callers need a key with the admin scope to read /metrics.", type: "authentication_error", param: null, code: null } }),
        { status: 401, headers: { "content-type": "application/json" } },
      );
    }
    return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
  });
}
