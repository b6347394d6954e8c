/**
 * What a finished request leaves behind (SPEC O-1…O-5, 9.4): its usage row, its metrics, its route trace
 * (scrubbed of secrets when it carries upstream error text), its OpenTelemetry span, its live
 * `request_finished` event and its JSON log line. Run after the reply was handed over (src/after-reply.ts).
 */
import { isCountTokens, presentedSecrets, scrubValue, traceNeedsScrub, type Finished, type RequestContext } from "../pipeline/index.ts";
import type { UsageRecord } from "../pipeline/ports.ts";
import type { EventBus } from "./events/bus.ts";
import { requestFinishedEvent } from "./events/request-finished.ts";
import type { GatewayMetrics } from "./http/metrics.ts";
import type { Store } from "./store/types.ts";
import type { FinishedRequest, Telemetry } from "./telemetry/otel.ts";

/** Where {@link requestReporter}'s report goes. */
export interface ReportDeps {
  store: Store;
  metrics: GatewayMetrics;
  /** Every secret the instance holds (scrubbed from traces). */
  secrets: () => string[];
  telemetry: Telemetry | undefined;
  /** A provider's kind by its id (OpenTelemetry's `gen_ai.provider.name`); read only when exporting. */
  providerKind?: FinishedRequest["providerKind"];
  bus: EventBus;
  log: (line: string) => void;
}

/** The report of a finished request: `(ctx, finished, its usage record, now in ms since the epoch)`. */
export function requestReporter(d: ReportDeps): (ctx: RequestContext, f: Finished, rec: UsageRecord, now: number) => void {
  const { store, metrics, bus, log } = d;
  return (ctx, f, rec, now) => {
    // Which of several instances on one store served it (newuser12a G11): the trace says so as the usage row does.
    ctx.trace.instance = rec.instance;
    ctx.trace.instanceId = rec.instanceId;
    // How it came (HTTP or Codex's Responses WebSocket): `calls inspect` and the call view read it from the trace.
    ctx.trace.transport = rec.transport;
    // A token count calls no model: it gets a trace and a log line but no usage row (O-1 counts model calls).
    if (!isCountTokens(ctx.endpoint)) store.record(rec);
    metrics.observe(ctx.endpoint, rec, f.bytesSent, ctx.trace.attempts);
    // Traces carry upstream error text, which may echo a credential (SPEC O-2: no secrets in traces);
    // only failed attempts and the error answer carry such text (traceNeedsScrub).
    store.save(traceNeedsScrub(ctx.trace) ? scrubValue(ctx.trace, [...d.secrets(), ...presentedSecrets(ctx.request.headers, ctx.request.url)]) : ctx.trace);
    // the class of the in-band error a reply that began ended with (its status stays the 200 it began with)
    const lateCode = f.outcome === "upstream_error" ? (f.reply?.lateError?.code ?? f.reply?.lateError?.kind) : undefined;
    // Arguments are built only when exporting (an optional call): nothing for an instance without OTel.
    d.telemetry?.record({
      trace: ctx.trace,
      // a token count's too (no token counts, no cost): its serving provider and account name the span's
      usage: rec,
      endpoint: ctx.endpoint,
      startedAt: ctx.startedAt,
      endedAt: now,
      streamed: ctx.stream,
      traceparent: ctx.request.headers.get("traceparent") ?? undefined,
      providerKind: d.providerKind,
      // `error.type`; for a reply that began, it read "200"
      errorCode: f.code ?? lateCode,
    });
    // SPEC 9.4 live events: built only while somebody listens (the dashboard, GET /admin/api/events).
    if (bus.wants("request_finished")) bus.publish(requestFinishedEvent(ctx, rec, now, f.target?.label));
    log(
      JSON.stringify({
        level: f.outcome === "ok" ? "info" : "warn",
        time: now,
        msg: "request",
        requestId: ctx.requestId,
        routeId: ctx.routeId,
        endpoint: ctx.endpoint,
        transport: ctx.transport,
        model: ctx.requestedModel || undefined,
        target: ctx.probe ? `switchyard/probe:${ctx.probe}` : f.target?.label,
        // The client key by name (never its secret) and, for a request served no reply, the error code
        // the client got (`model_not_allowed`, `key_rate_limit_exceeded`, …): try19 D6; for a stream the
        // gateway's stop ended, its in-band error's (`gateway_stopping`, Finished.code).
        key: rec.keyName,
        outcome: f.outcome,
        status: f.status,
        // a reply that began and ended with an in-band error (the upstream idle timeout's
        // `upstream_idle_timeout`, its own error event): that error's code, as the span's error.type
        code: f.outcome === "ok" ? undefined : (ctx.trace.error?.code ?? ctx.trace.error?.kind ?? f.code ?? lateCode),
        attempts: f.attempts,
        fallback: f.fallback || undefined,
        ttfbMs: rec.ttfbMs,
        totalMs: rec.totalMs,
        // SPEC O-1: figures the gateway estimated (the provider reported none) are marked so, as in the usage row
        usage: rec.estimated ? { ...rec.usage, estimated: true } : rec.usage,
        costUsd: rec.costUsd,
        // SPEC S-1 savings and R-1 redaction counts (never values); not in the usage table yet.
        tokenSaver: ctx.trace.tokenSaver,
        redactions: ctx.trace.redactions,
      }),
    );
  };
}
