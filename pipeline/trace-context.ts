/**
 * W3C Trace Context on the upstream call (SPEC O-5): the `traceparent` an attempt sends its provider,
 * so the provider's own spans join the request's trace as children of that attempt's span.
 *
 * Source: W3C Trace Context Level 1, section 3.2 (`traceparent` is `VERSION-TRACEID-PARENTID-FLAGS` in
 * lowercase hex; version `ff`, an all-zero trace or parent id and a malformed value are invalid; a
 * later version may append fields after a dash, version 00 may not) and section 3.3 (`tracestate` is
 * passed on unchanged by a participant that adds no entry of its own).
 */
import type { AttemptTrace } from "./ports.ts";
import type { RequestContext } from "./context.ts";

/** A parsed, valid `traceparent`: trace id (32 hex), parent span id (16 hex), trace flags (2 hex). */
export interface TraceParent {
  traceId: string;
  spanId: string;
  flags: string;
}

/** Version-traceid-parentid-flags and an optional tail (one RegExp for the process). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/**
 * The caller's span from a W3C `traceparent` header value; undefined when absent or invalid (version
 * `ff`, all-zero ids, version 00 with extra fields, anything malformed: section 3.2 says to ignore it).
 */
export function parseTraceparent(header: string | null | undefined): TraceParent | undefined {
  if (!header) return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5] !== undefined)) return undefined;
  if (ALL_ZERO.test(m[2]!) || ALL_ZERO.test(m[3]!)) return undefined;
  return { traceId: m[2]!, spanId: m[3]!, flags: m[4]! };
}

/** `bytes` random bytes as lowercase hex (a trace id is 16 bytes, a span id 8). */
export function randomHexId(bytes: 8 | 16): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/**
 * The `traceparent` one attempt sends upstream while spans are exported: the request's trace (the
 * caller's trace id when its `traceparent` was valid, otherwise a new one, kept on the route trace as
 * `otelTraceId` so the exported request span carries it) and a new span id for this attempt (kept on
 * the attempt as `spanId`: its exported span gets that id), flags `01` (every span is exported).
 */
export function upstreamTraceparent(ctx: RequestContext, attempt: AttemptTrace): string {
  const t = ctx.trace;
  t.otelTraceId ??= parseTraceparent(ctx.request.headers.get("traceparent"))?.traceId ?? randomHexId(16);
  attempt.spanId = randomHexId(8);
  return `00-${t.otelTraceId}-${attempt.spanId}-01`;
}
