/**
 * OpenTelemetry traces (SPEC O-5) with the official OpenTelemetry JS SDK, exported over OTLP/HTTP
 * (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. The app imports this module only then (a dynamic
 * import, ./otel-env.ts `startTelemetryIfAsked`), so an instance without it loads none of the SDK.
 *
 * Spans are built when a request finishes, from what the request recorded (its route trace and usage
 * row), with their real start and end times: one SERVER span per request and one CLIENT child per
 * upstream attempt, named and attributed after the GenAI semantic conventions (`{operation} {model}`,
 * `gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.provider.name`,
 * `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `error.type`), plus `switchyard.*`
 * attributes (route and request ids, account, outcome). No prompt text, no secrets. The hot path does
 * nothing for it: the batch span processor exports in the background.
 *
 * Environment read (OpenTelemetry's standard names, by the constants of ./otel-env.ts, the one list
 * `switchyard service install` carries too): `OTEL_EXPORTER_OTLP_ENDPOINT` (spans go to
 * `{endpoint}/v1/traces`), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL, wins),
 * `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`), `OTEL_SERVICE_NAME`
 * (default `switchyard`), `OTEL_RESOURCE_ATTRIBUTES` (`k=v,…` on every span's resource; see
 * {@link resourceAttributes}), `OTEL_SDK_DISABLED` (`true`: no export), `OTEL_BSP_SCHEDULE_DELAY` (ms between exports, default 5000),
 * `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `OTEL_EXPORTER_OTLP_TIMEOUT` (ms one batch's export may take,
 * retries included; default {@link EXPORT_TIMEOUT_MS}, not the SDK's 10 s: see there);
 * `OTEL_EXPORTER_OTLP_PROTOCOL` / `_TRACES_PROTOCOL` only to warn when it is not `http/json` (the one
 * protocol exported). Until 2026-12-05 `OTEL_SDK_DISABLED` and `OTEL_RESOURCE_ATTRIBUTES` were ignored
 * (newuser15's tryout, N2).
 *
 * What the operator is told (one JSON log line each, through `log`): where spans go, at start; an
 * endpoint that is no http(s) URL (`localhost:4318`, which the exporter took and then sent nothing
 * to, without a word), instead of exporting; the first failed export (a collector that is down,
 * refuses or is not there), and that export works again at the next one that succeeds. Before, a
 * collector that never received a span left no trace of why.
 */
import { type Attributes, context, type SpanContext, SpanKind, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { IdGenerator, ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import type { ProviderKind } from "../../formats/codec.ts";
import type { AttemptTrace, RouteTrace, UsageRecord } from "../../pipeline/ports.ts";
import { isCountTokens, parseTraceparent, randomHexId, type Endpoint } from "../../pipeline/index.ts";
import { OTEL_ENV, sdkDisabled } from "./otel-env.ts";
import { shownTracesUrl } from "../show-url.ts";
import { priceVendor } from "../pricing/prices.ts";

/** What the app hands over for one finished request. */
export interface FinishedRequest {
  trace: RouteTrace;
  /**
   * The usage record (token counts, served model, provider and account; `estimated` when the provider
   * reported no usage). A token count's has no token counts: it names the provider that gave the count.
   */
  usage?: UsageRecord;
  /** The endpoint family (`messages`, `chat`, `responses`, `count_tokens`, …). */
  endpoint: string;
  /** ms since the epoch when the request arrived and when it finished. */
  startedAt: number;
  endedAt: number;
  /** The client asked for a streamed reply: the attempt that served it lasted until the stream ended. */
  streamed?: boolean;
  /** The request's W3C `traceparent` header, when it had one: the request span continues that trace. */
  traceparent?: string;
  /** A provider's kind by its id (for `gen_ai.provider.name`, {@link genAiProviderName}). */
  providerKind?: (providerId: string) => ProviderKind | undefined;
  /**
   * The class of the error a reply that began (status 200) ended with, for `error.type`: the code of
   * the in-band error its client got (SPEC 6.4: `upstream_connection_lost` for a connection that broke
   * mid-reply, `upstream_truncated`, `upstream_idle_timeout`, `upstream_malformed`, the provider's own
   * code for its in-band error) or `gateway_stopping` for a stream a shutdown ended (SPEC D-3). Absent
   * otherwise; {@link errorType} then uses the HTTP status or the outcome.
   */
  errorCode?: string;
}

/**
 * The `error.type` of a failed request's span (OpenTelemetry's general and GenAI conventions: a
 * low-cardinality class of the error, an HTTP status code for an HTTP failure): the status when the
 * client was answered with one ≥ 400; else — a reply that began with 200 and then broke, or a client
 * that left (its 499 is no answer anyone got) — the failure's class, `errorCode`, else the outcome
 * (`upstream_error`, `client_closed`, `error`). It said "200" for a stream cut mid-reply (a new-user tryout).
 */
export function errorType(status: number | undefined, outcome: string | undefined, errorCode: string | undefined): string {
  if (status !== undefined && status >= 400 && outcome !== "client_closed") return String(status);
  return errorCode ?? (outcome !== undefined && outcome !== "ok" ? outcome : "error");
}

/**
 * The GenAI semantic conventions' well-known `gen_ai.provider.name` of a provider kind: `anthropic`
 * (Anthropic's API, also through a Claude subscription), `openai` (Chat, Responses, Codex), `gcp.gemini`
 * (the Gemini API). A third-party server of a known format (`*-compatible`) has none: its switchyard
 * provider id is used, as the conventions allow a custom value. The id is always in `switchyard.provider`.
 */
export function genAiProviderName(kind: ProviderKind | undefined, providerId: string): string {
  // the price table's vendor of the kind (one kind → vendor map); the conventions name Google's Gemini API `gcp.gemini`
  const vendor = kind === undefined ? undefined : priceVendor(kind);
  return vendor === "google" ? "gcp.gemini" : (vendor ?? providerId);
}

/**
 * The caller's span from a W3C `traceparent` (pipeline/trace-context.ts parseTraceparent: Trace Context,
 * section 3.2; invalid values are ignored), as a remote span context; undefined when none.
 */
export function remoteParent(traceparent: string | undefined): SpanContext | undefined {
  const p = parseTraceparent(traceparent);
  return p ? { traceId: p.traceId, spanId: p.spanId, traceFlags: parseInt(p.flags, 16) & 1, isRemote: true } : undefined;
}

/**
 * The SDK's id source, told the ids a request already sent upstream (pipeline/trace-context.ts): the
 * request's trace id and each attempt's span id are chosen when the attempt is sent (its `traceparent`
 * names them), and its spans are made after the request finished. Each prepared id is used once; the
 * rest are random, as the SDK's own generator makes them.
 */
class PreparedIds implements IdGenerator {
  traceId: string | undefined;
  spanId: string | undefined;
  generateTraceId(): string {
    const id = this.traceId ?? randomHexId(16);
    this.traceId = undefined;
    return id;
  }
  generateSpanId(): string {
    const id = this.spanId ?? randomHexId(8);
    this.spanId = undefined;
    return id;
  }
}

/** A running exporter. */
export interface Telemetry {
  /** Records one finished request as a span with one child per attempt. Never throws. */
  record(req: FinishedRequest): void;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

/**
 * GenAI `gen_ai.operation.name` of an endpoint family: `count_tokens` for both token counts (Messages'
 * `/v1/messages/count_tokens` and Gemini's `:countTokens`, pipeline/context.ts isCountTokens).
 */
function operation(endpoint: string): string {
  if (isCountTokens(endpoint as Endpoint)) return "count_tokens";
  if (endpoint === "embeddings") return "embeddings";
  return "chat";
}

/**
 * The resource of every span: `OTEL_RESOURCE_ATTRIBUTES` (`k=v,k2=v2`, percent-decoded, as the SDK
 * environment spec and its `envDetector` read it), then `service.name` from `OTEL_SERVICE_NAME` (which
 * wins over the list's, as the spec says; default `switchyard`), and the build's `service.version` and
 * the gateway's `service.instance.id` (they win: they match the log and the usage rows).
 */
export function resourceAttributes(env: Record<string, string | undefined>, version: string, instanceId: string): Record<string, string> {
  const listed = parseHeaders(env[OTEL_ENV.resourceAttributes]);
  const name = env[OTEL_ENV.serviceName]?.trim() || listed["service.name"] || "switchyard";
  return { ...listed, "service.name": name, "service.version": version, "service.instance.id": instanceId };
}

/** `k=v,k2=v2` (values URL-encoded, as the OTLP exporter spec says) as headers. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    const i = part.indexOf("=");
    if (i <= 0) continue;
    try {
      out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // a malformed pair is skipped
    }
  }
  return out;
}

/**
 * The OTLP/HTTP traces URL from the environment, or undefined when export is off.
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as it is; `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL
 * whose path gets `/v1/traces` (the OTLP exporter spec, "Endpoint URLs for OTLP/HTTP"). A query or
 * fragment of the base stays after the new path (`http://h/collector?token=abc` →
 * `http://h/collector/v1/traces?token=abc`; appending the text after the query sent the spans to
 * `/collector`). A base that is no http(s) URL is returned with the path appended as text, for
 * {@link startTelemetry} to refuse by name.
 */
export function tracesUrl(env: Record<string, string | undefined>): string | undefined {
  const full = env[OTEL_ENV.tracesEndpoint]?.trim();
  if (full) return full;
  const base = env[OTEL_ENV.endpoint]?.trim();
  if (!base) return undefined;
  if (URL.canParse(base)) {
    const u = new URL(base);
    if (u.protocol === "http:" || u.protocol === "https:") {
      u.pathname = `${u.pathname.replace(/\/+$/, "")}/v1/traces`;
      return u.toString();
    }
  }
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/** The variable the traces URL came from (for messages). */
function urlVariable(env: Record<string, string | undefined>): string {
  return env[OTEL_ENV.tracesEndpoint]?.trim() ? OTEL_ENV.tracesEndpoint : OTEL_ENV.endpoint;
}

/**
 * The default export timeout, ms: how long the OTLP exporter may spend on one batch, its retries
 * included (the SDK's `timeoutMillis`). The SDK's default is 10 s, and it spends them retrying a
 * collector that refuses the connection (its RetryingTransport: 1 s backoff growing 1.5× with ±20 %
 * jitter, while the next retry fits before the timeout), so the first failure reached the log ~8 s
 * after the batch. With 2 s a refused batch is retried once, ~1 s later, and then reported; a
 * collector that answers within 2 s (one on the same host or network answers in milliseconds) is
 * not affected. A slower one is given longer with `OTEL_EXPORTER_OTLP_TIMEOUT`.
 */
export const EXPORT_TIMEOUT_MS = 2_000;

/**
 * The export timeout from `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT` (ms, a
 * number above 0, as the OTLP exporter spec reads them), else {@link EXPORT_TIMEOUT_MS}. A value that
 * is no such number is a warning naming the variable, and the default is used.
 */
function exportTimeout(env: Record<string, string | undefined>, log: (line: string) => void): number {
  for (const variable of [OTEL_ENV.tracesTimeout, OTEL_ENV.timeout]) {
    const text = env[variable]?.trim();
    if (!text) continue;
    const ms = Number(text);
    if (Number.isFinite(ms) && ms > 0) return ms;
    log(JSON.stringify({ level: "warn", time: Date.now(), msg: `${variable} must be a number of milliseconds above 0, not ${JSON.stringify(text)}: using ${EXPORT_TIMEOUT_MS}` }));
    return EXPORT_TIMEOUT_MS;
  }
  return EXPORT_TIMEOUT_MS;
}

/** ExportResultCode.SUCCESS of @opentelemetry/core (its enum's value; core is not a dependency of ours). */
const EXPORT_SUCCESS = 0;

/**
 * What a failed export's error says, for the log: its message, with the collector's HTTP status when
 * the error carries it (the exporter's `OTLPExporterError.code`: "Bad Request (HTTP 400)"). A collector
 * that answered 429, 502, 503 or 504 to every try leaves only "Export failed with retryable status"
 * (the exporter keeps no status for those): said as such.
 */
export function exportFailure(error: Error | undefined): string {
  if (!error) return "no reason given";
  const status = (error as { code?: unknown }).code;
  const message = error.message || "no message";
  if (typeof status === "number" && status >= 100 && status <= 599) return `${message} (HTTP ${status})`;
  if (message === "Export failed with retryable status") return "the collector answered 429, 502, 503 or 504 (busy or unavailable) to every try; the exporter does not say which";
  return message;
}

/** An exporter's answer for one batch (@opentelemetry/core's `ExportResult`). */
type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];

/**
 * The OTLP exporter, telling the log when exporting starts to fail (once, with the exporter's error)
 * and when it works again; the SDK's own diagnostics are off, so a failed export said nothing.
 */
class ReportingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly where: string,
    private readonly log: (line: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      try {
        if (result.code !== EXPORT_SUCCESS && !this.failing) {
          this.failing = true;
          const error = exportFailure(result.error).slice(0, 300);
          this.log(JSON.stringify({ level: "warn", time: Date.now(), msg: `OpenTelemetry export to ${this.where} failed: ${error}; spans are dropped until the collector answers (logged again when it does)`, spans: spans.length }));
        } else if (result.code === EXPORT_SUCCESS && this.failing) {
          this.failing = false;
          this.log(JSON.stringify({ level: "info", time: Date.now(), msg: `OpenTelemetry export to ${this.where} works again` }));
        }
      } finally {
        done(result);
      }
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * Starts the SDK: a tracer provider with the service's resource and a batch processor in front of the
 * OTLP/HTTP exporter, and says so in the log. @returns undefined when the environment does not ask for
 * export, or names an endpoint that is no http(s) URL (logged as a warning: the gateway serves on
 * without exporting).
 */
export function startTelemetry(env: Record<string, string | undefined>, version: string, log: (line: string) => void = () => {}, instanceId: string = crypto.randomUUID()): Telemetry | undefined {
  const url = tracesUrl(env);
  if (!url || sdkDisabled(env)) return undefined;
  const protocol = env[OTEL_ENV.tracesProtocol]?.trim() || env[OTEL_ENV.protocol]?.trim();
  if (protocol && protocol !== "http/json") {
    const variable = env[OTEL_ENV.tracesProtocol]?.trim() ? OTEL_ENV.tracesProtocol : OTEL_ENV.protocol;
    log(JSON.stringify({ level: "warn", time: Date.now(), msg: `${variable}=${protocol} is not supported: switchyard exports OTLP over HTTP as JSON (http/json); a collector's gRPC port (4317) will not take it, use its HTTP port (4318)` }));
  }
  const where = shownTracesUrl(url);
  if (!where) {
    const variable = urlVariable(env);
    log(JSON.stringify({ level: "warn", time: Date.now(), msg: `OpenTelemetry export is off: ${variable} must be an http:// or https:// URL (e.g. http://127.0.0.1:4318), not ${JSON.stringify(withoutUserinfo(env[variable]!.trim()))}` }));
    return undefined;
  }
  const exporter = new ReportingExporter(
    new OTLPTraceExporter({
      url,
      timeoutMillis: exportTimeout(env, log),
      headers: { ...parseHeaders(env[OTEL_ENV.headers]), ...parseHeaders(env[OTEL_ENV.tracesHeaders]) },
    }),
    where,
    log,
  );
  // OpenTelemetry's service.instance.id, one per process: which of several instances served a span
  // (semantic conventions: a random UUID is fine; the gateway's own, which its usage rows and traces
  // carry too); the log line names it so spans can be matched to a log.
  log(JSON.stringify({ level: "info", time: Date.now(), msg: `OpenTelemetry: exporting a span per request to ${where}`, serviceInstanceId: instanceId }));
  const delay = Number(env[OTEL_ENV.scheduleDelay]);
  const ids = new PreparedIds();
  const provider = new TracerProvider({
    // SPEC O-5: one span per request. The SDK's default (ParentBased) drops a span whose caller's
    // traceparent says "not sampled" (flags 00), which instrumented clients send for most requests their
    // own ratio sampler drops: the caller's trace is continued, its sampling decision is not (review15 R3).
    sampler: new AlwaysOnSampler(),
    idGenerator: ids,
    resource: resourceFromAttributes(resourceAttributes(env, version, instanceId)),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: Number.isFinite(delay) && delay > 0 ? delay : 5000 })],
  });
  const tracer = provider.getTracer("switchyard", version);
  return {
    record(req) {
      try {
        recordSpans(tracer, ids, req);
      } catch {
        // telemetry never fails a request
      } finally {
        // an id prepared for a span that was never made (its attributes threw) is not another request's
        ids.traceId = ids.spanId = undefined;
      }
    },
    async shutdown() {
      await provider.shutdown().catch(() => {});
    },
  };
}

function recordSpans(tracer: Tracer, ids: PreparedIds, req: FinishedRequest): void {
  const t = req.trace;
  const u = req.usage;
  const op = operation(req.endpoint);
  const attrs: Attributes = {
    "gen_ai.operation.name": op,
    "gen_ai.request.model": t.requestedModel,
    "switchyard.route_id": t.routeId,
    "switchyard.request_id": t.requestId,
    "switchyard.client_format": t.clientFormat,
    "switchyard.endpoint": req.endpoint,
    "switchyard.attempts": t.attempts.length,
  };
  if (t.outcome) attrs["switchyard.outcome"] = t.outcome;
  if (t.status !== undefined) attrs["http.response.status_code"] = t.status;
  if (t.keyName) attrs["switchyard.key"] = t.keyName;
  if (u?.providerId) {
    attrs["gen_ai.provider.name"] = genAiProviderName(req.providerKind?.(u.providerId), u.providerId);
    attrs["switchyard.provider"] = u.providerId;
  }
  // the model that answered: a request refused or failed on every attempt got no response (it named
  // the last model tried: newuser12a's tryout)
  if (u?.model && t.status !== undefined && t.status < 400) attrs["gen_ai.response.model"] = u.model;
  if (u?.accountId) attrs["switchyard.account"] = u.accountId;
  if (u?.fallback) attrs["switchyard.fallback"] = true;
  if (u?.usage.inputTokens !== undefined) attrs["gen_ai.usage.input_tokens"] = u.usage.inputTokens;
  if (u?.usage.outputTokens !== undefined) attrs["gen_ai.usage.output_tokens"] = u.usage.outputTokens;
  if (u?.usage.cacheReadTokens !== undefined) attrs["gen_ai.usage.cache_read.input_tokens"] = u.usage.cacheReadTokens;
  if (u?.usage.cacheWriteTokens !== undefined) attrs["gen_ai.usage.cache_creation.input_tokens"] = u.usage.cacheWriteTokens;
  // SPEC O-1: the gen_ai.usage.* figures are the gateway's estimate (the provider reported none)
  if (u?.estimated) attrs["switchyard.usage.estimated"] = true;
  if (u?.costUsd !== undefined) attrs["switchyard.cost_usd"] = u.costUsd;
  const failed = t.outcome !== undefined && t.outcome !== "ok";
  if (failed) attrs["error.type"] = errorType(t.status, t.outcome, req.errorCode);
  // The caller's trace, when the request carried a traceparent (exported whatever its sampled flag says).
  const caller = remoteParent(req.traceparent);
  const outer = caller ? trace.setSpanContext(context.active(), caller) : context.active();
  ids.traceId = t.otelTraceId; // used only when there is no caller's trace (then it is the one sent upstream)
  const span = tracer.startSpan(`${op} ${t.requestedModel}`.trim(), { kind: SpanKind.SERVER, startTime: req.startedAt, attributes: attrs }, outer);
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: t.outcome });
  const parent = trace.setSpan(outer, span);
  const attempts = t.attempts;
  for (let i = 0; i < attempts.length; i++) {
    const a = attempts[i]!;
    // A streamed reply's serving attempt (the last, answered < 400) lasted until the stream ended or was
    // cut: its span ends with the request, not at the upstream's headers (newuser15 N6).
    const served = i === attempts.length - 1 && a.status !== undefined && a.status < 400;
    attemptSpan(tracer, ids, parent, op, req, a, req.streamed === true && served, served);
  }
  span.end(req.endedAt);
}

/**
 * One attempt's CLIENT span. `served`: the attempt whose reply began (the last, answered < 400); an
 * error of its own is the one its reply ended with, of the request's class ({@link errorType}), and a
 * client that left before its end makes it one too (`error.type: client_closed`, as the request's). A
 * failed attempt's `error.type` is its classification row (SPEC 6.3: `transport`, `rate_limit`, …).
 */
function attemptSpan(tracer: Tracer, ids: PreparedIds, parent: ReturnType<typeof trace.setSpan>, op: string, req: FinishedRequest, a: AttemptTrace, streamedToEnd: boolean, served: boolean): void {
  const { startedAt, endedAt } = req;
  const attrs: Attributes = {
    "gen_ai.operation.name": op,
    "gen_ai.request.model": a.model,
    "gen_ai.provider.name": genAiProviderName(req.providerKind?.(a.providerId), a.providerId),
    "switchyard.provider": a.providerId,
    "switchyard.target": a.target,
  };
  if (a.accountId) attrs["switchyard.account"] = a.accountId;
  if (a.status !== undefined) attrs["http.response.status_code"] = a.status;
  if (a.classification) attrs["switchyard.classification"] = a.classification;
  if (a.effect) attrs["switchyard.effect"] = a.effect;
  // A served attempt whose client left mid-reply ended as the request did (client_closed), not OK.
  const ok = a.error === undefined && (a.status === undefined || a.status < 400) && !(served && req.trace.outcome === "client_closed");
  if (!ok) attrs["error.type"] = a.classification ?? (served ? errorType(undefined, req.trace.outcome, req.errorCode) : errorType(a.status, undefined, undefined));
  const start = startedAt + a.startMs;
  const end = streamedToEnd || a.durationMs === undefined ? endedAt : start + a.durationMs;
  ids.spanId = a.spanId; // the span id its upstream call's traceparent named
  const span = tracer.startSpan(`${op} ${a.model}`, { kind: SpanKind.CLIENT, startTime: start, attributes: attrs }, parent);
  if (!ok) span.setStatus({ code: SpanStatusCode.ERROR, message: attrs["error.type"] as string });
  span.end(end);
}

/**
 * `value` as a log line may quote a setting that is not an http(s) URL (`grpc://alice:pw@collector:4317`):
 * everything up to its last `@` (a user and password, whatever characters the password holds: `#`, `/`
 * and `?` too, or without a scheme: `alice:pw@collector:4318`) cut to `…@`, and a query or fragment
 * after that left out, as {@link shownTracesUrl} leaves out an http URL's. Never throws.
 */
function withoutUserinfo(value: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(value)?.[0] ?? "";
  const at = value.lastIndexOf("@");
  const rest = at >= scheme.length ? `…${value.slice(at)}` : value.slice(scheme.length);
  const query = rest.search(/[?#]/);
  return scheme + (query >= 0 ? `${rest.slice(0, query)} (query not shown)` : rest);
}
