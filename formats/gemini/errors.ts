/**
 * Gemini errors (REFERENCE §4.4, §5.2): HTTP error bodies and in-band `data: {"error":…}` chunks are
 * both `google.rpc.Status` JSON: `{"error": {"code": 429, "message": "…", "status": "RESOURCE_EXHAUSTED",
 * "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"}, …]}}`.
 */
import * as v from "valibot";
import { clientErrorStatus, ERROR_STATUS, type ErrorKind, type HubError } from "../hub.ts";
import { rawErrorText } from "../raw-error-text.ts";
import { retryAfterSeconds } from "../retry-after.ts";
import { ErrorBodySchema } from "./schema.ts";

const RPC = "type.googleapis.com/google.rpc.";

/** Gemini `status` per hub error kind (REFERENCE §5.2). */
const STATUS_OF_KIND: Record<ErrorKind, string> = {
  invalid_request: "INVALID_ARGUMENT",
  context_length_exceeded: "INVALID_ARGUMENT",
  request_too_large: "INVALID_ARGUMENT",
  authentication: "UNAUTHENTICATED",
  permission: "PERMISSION_DENIED",
  not_found: "NOT_FOUND",
  model_not_found: "NOT_FOUND",
  billing: "RESOURCE_EXHAUSTED",
  quota_exhausted: "RESOURCE_EXHAUSTED",
  rate_limit: "RESOURCE_EXHAUSTED",
  overloaded: "UNAVAILABLE",
  timeout: "DEADLINE_EXCEEDED",
  api_error: "INTERNAL",
};

/**
 * Hub error → Gemini error body `{"error": {code, message, status, details?}}` (REFERENCE §4.4).
 * `code` is the HTTP status a Gemini client gets for `err` (`err.status`, Anthropic's 529 as 503:
 * hub.ts clientErrorStatus), the status the body is sent with before a stream starts, and the same in
 * the payload of an in-band error chunk after it started (the SDK raises `ApiError` with that status);
 * a `retryAfterSeconds` becomes a `google.rpc.RetryInfo` detail, as Google sends it.
 */
export function errorBody(err: HubError): { error: Record<string, unknown> } {
  const code = clientErrorStatus("gemini", err.status, err.operatorOnly);
  const error: Record<string, unknown> = { code, message: err.message, status: statusOf(err, code) };
  if (err.retryAfterSeconds !== undefined && err.retryAfterSeconds >= 0) {
    error.details = [{ "@type": `${RPC}RetryInfo`, retryDelay: `${err.retryAfterSeconds}s` }];
  }
  return { error };
}

/**
 * The `google.rpc.Code` name of `err` sent with HTTP `code`: by its kind (REFERENCE §5.2), except a
 * gateway error (`api_error`) of 503 or 504, which Google writes `UNAVAILABLE` and `DEADLINE_EXCEEDED`
 * (as its own overload and timeout answers), and an error only an operator can end, which goes out as a
 * 400 `FAILED_PRECONDITION` (the request's target is not in a state to serve it: google.rpc.Code 9).
 */
function statusOf(err: HubError, code: number): string {
  if (err.operatorOnly && code === 400) return "FAILED_PRECONDITION";
  if (err.kind === "api_error" && code === 503) return "UNAVAILABLE";
  if (err.kind === "api_error" && code === 504) return "DEADLINE_EXCEEDED";
  return STATUS_OF_KIND[err.kind] ?? "INTERNAL";
}

/** Parses a proto `Duration` JSON string (`"34.4s"`, `"5s"`) into seconds. */
export function parseDuration(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Removes Google API keys (`AIza…`) and bearer tokens from text shown to clients (REFERENCE §5.2). */
export function redactSecrets(text: string): string {
  return text.replace(/AIza[0-9A-Za-z_-]{30,}/g, "[redacted]").replace(/ya29\.[0-9A-Za-z_.-]+/g, "[redacted]");
}

const LONG_WINDOW = /per ?(day|month|year)|daily|monthly|perday|permonth/i;
const SHORT_WINDOW = /per ?(second|minute|hour)|perminute|persecond/i;
const CONTEXT_TOO_LONG =
  /input token count.*exceeds|exceeds the maximum number of tokens|context (length|window)|prompt is too long|too many tokens/i;

/**
 * Classifies a `RESOURCE_EXHAUSTED` (429) by its `QuotaFailure` detail (judgement, SPEC 6.3): a
 * violated per-day/per-month quota, or a quota of 0 (a model the tier has no quota for), is
 * `quota_exhausted` (the account is locked until the reset); a per-minute/per-second one is a
 * `rate_limit`; a QuotaFailure naming no window is `quota_exhausted`; no QuotaFailure at all (Vertex's
 * shared-capacity "Resource exhausted") is a `rate_limit`.
 */
function classifyExhausted(details: readonly Record<string, unknown>[]): ErrorKind {
  const qf = details.find((d) => d["@type"] === `${RPC}QuotaFailure`);
  if (!qf) return "rate_limit";
  const violations = Array.isArray(qf.violations) ? (qf.violations as Record<string, unknown>[]) : [];
  let short = false;
  for (const vio of violations) {
    if (!vio || typeof vio !== "object") continue;
    if (vio.quotaValue === "0" || vio.quotaValue === 0) return "quota_exhausted";
    const words = [vio.quotaId, vio.quotaMetric, vio.description, vio.subject].filter((x) => typeof x === "string").join(" ");
    if (LONG_WINDOW.test(words)) return "quota_exhausted";
    if (SHORT_WINDOW.test(words)) short = true;
  }
  return short ? "rate_limit" : "quota_exhausted";
}

/**
 * A `google.rpc.Status` object (the value of `error`) → hub error. `httpStatus` is the HTTP status the
 * body came with (0 for an in-band chunk: the Status `code` is used then); `headers` and `now` (ms
 * since the epoch, for an HTTP-date `Retry-After`) are the HTTP reply's. Never throws.
 */
export function errorFromStatus(
  error: Record<string, unknown>,
  httpStatus: number,
  headers?: Headers,
  now?: number,
): HubError {
  const code = typeof error.code === "number" ? error.code : 0;
  const status = typeof error.status === "string" ? error.status : "";
  const http = httpStatus >= 400 ? httpStatus : code >= 400 ? code : 500;
  const details = Array.isArray(error.details)
    ? (error.details.filter((d) => d && typeof d === "object") as Record<string, unknown>[])
    : [];
  const rawMessage = typeof error.message === "string" && error.message.length > 0 ? error.message : `Gemini returned HTTP ${http}${status ? ` ${status}` : ""}.`;
  const message = redactSecrets(rawMessage);
  const reason = details.find((d) => d["@type"] === `${RPC}ErrorInfo`)?.reason;

  let kind: ErrorKind;
  let outStatus = http;
  if (reason === "API_KEY_INVALID" || reason === "API_KEY_EXPIRED" || /api key (not valid|expired)/i.test(rawMessage)) {
    // Google answers an invalid key with 400 INVALID_ARGUMENT; it is a credential failure.
    kind = "authentication";
    outStatus = 401;
  } else if (status === "RESOURCE_EXHAUSTED" || http === 429) {
    kind = classifyExhausted(details);
    outStatus = 429;
  } else if (status === "UNAUTHENTICATED" || http === 401) kind = "authentication";
  else if (status === "PERMISSION_DENIED" || http === 403) kind = "permission";
  else if (status === "NOT_FOUND" || http === 404) kind = /model/i.test(rawMessage) ? "model_not_found" : "not_found";
  else if (http === 413) kind = "request_too_large";
  else if (status === "UNAVAILABLE" || http === 503) kind = "overloaded";
  else if (status === "DEADLINE_EXCEEDED" || http === 504) kind = "timeout";
  else if (status === "INVALID_ARGUMENT" || status === "FAILED_PRECONDITION" || status === "OUT_OF_RANGE" || (http >= 400 && http < 500)) {
    kind = CONTEXT_TOO_LONG.test(rawMessage) ? "context_length_exceeded" : "invalid_request";
  } else kind = "api_error";

  const out: HubError = { kind, message, status: outStatus >= 400 ? outStatus : ERROR_STATUS[kind] };
  const errCode = typeof reason === "string" ? reason : status;
  if (errCode) out.code = errCode;

  let retry: number | undefined;
  for (const d of details) {
    if (d["@type"] === `${RPC}RetryInfo`) retry = parseDuration(d.retryDelay);
  }
  retry ??= retryAfterSeconds(headers, now);
  if (retry === undefined) {
    const m = /retry in (\d+(?:\.\d+)?)\s*s/i.exec(rawMessage);
    if (m) retry = Number(m[1]);
  }
  // Retry-After is whole seconds: round up so a client never retries early.
  if (retry !== undefined && Number.isFinite(retry)) out.retryAfterSeconds = Math.ceil(retry);
  return out;
}

/**
 * Provider HTTP error → hub error (FormatCodec.parseError). Reads the Status body (also when Google
 * wraps it in a one-element array, as the non-SSE stream endpoint does); falls back to the HTTP status
 * for bodies that are not JSON. `retryAfterSeconds` comes from `RetryInfo.retryDelay`, else the
 * `retry-after-ms` / `Retry-After` headers (formats/retry-after.ts; an HTTP date measured against
 * `now`, ms since the epoch), else "retry in Ns" in the message, rounded up. Never throws.
 */
export function parseError(status: number, body: string, headers: Headers, now?: number): HubError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  const ok = v.safeParse(ErrorBodySchema, parsed);
  if (ok.success) return errorFromStatus(ok.output.error as Record<string, unknown>, status, headers, now);
  return errorFromStatus({ message: rawErrorText(body, 500) }, status, headers, now);
}
