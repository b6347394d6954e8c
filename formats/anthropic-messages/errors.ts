/**
 * Anthropic error bodies, in-band error frames, and upstream error parsing (REFERENCE §1.4, §5.2).
 */
import { hubError, type ErrorKind, type HubError } from "../hub.ts";
import { rawErrorText } from "../raw-error-text.ts";
import { retryAfterSeconds } from "../retry-after.ts";
import { tryParseJson } from "../sse.ts";
import { errorTypeFor, kindForErrorType } from "./mapping.ts";

/**
 * HTTP error body in Anthropic's shape: `{"type":"error","error":{"type","message"}}` (REFERENCE §1.4).
 * `error.type` comes from the hub kind (§5.2 table); the HTTP status to answer with is `err.status`.
 * No `request_id` is added here (the server sets `X-Request-Id`).
 */
export function errorBody(err: HubError): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: errorTypeFor(err.kind), message: err.message } };
}

/**
 * The in-band error frame that ends an Anthropic stream after commit (SPEC 6.4, REFERENCE §1.4):
 * `event: error` with the same JSON as {@link errorBody}, except that a timeout (the upstream's idle
 * timeout mid-stream) is `api_error`: SPEC 6.4 names `api_error` or `overloaded_error` for a stream cut
 * after commit, and REFERENCE §5 "upstream ended without any finish signal (EOF, reset, idle timeout)"
 * `api_error`; `timeout_error` stays the 504 answer before commit ({@link errorBody}). The official SDKs
 * throw `APIError` typed from `error.type` on it (`core/streaming.ts`). Nothing may follow it.
 */
export function errorFrame(err: HubError): string {
  return (
    'event: error\ndata: {"type":"error","error":{"type":"' +
    (err.kind === "timeout" ? "api_error" : errorTypeFor(err.kind)) +
    '","message":' +
    JSON.stringify(err.message) +
    "}}\n\n"
  );
}

/** Longest upstream error text kept in a {@link HubError} message when the body is not JSON. */
const MAX_RAW_MESSAGE = 500;

/** Hub kind for an HTTP status when the body does not say (REFERENCE §1.4 status table). */
function kindForStatus(status: number): ErrorKind {
  if (status === 400 || status === 409 || status === 422) return "invalid_request";
  if (status === 401) return "authentication";
  if (status === 402) return "billing";
  if (status === 403) return "permission";
  if (status === 404) return "not_found";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit";
  if (status === 529 || status === 503) return "overloaded";
  if (status === 504 || status === 408) return "timeout";
  if (status >= 400 && status < 500) return "invalid_request";
  return "api_error";
}

/**
 * Builds a {@link HubError} from an Anthropic error object `{type, message, details?}` (the `error`
 * member of an HTTP error body or of an in-band `event: error`). Refinements:
 * - `invalid_request_error` whose message says the prompt is too long → `context_length_exceeded`;
 * - `not_found_error` that names a model → `model_not_found`;
 * - `rate_limit_error` with `details.error_code: enforced_spend_limit_reached` → `quota_exhausted`
 *   (a spend cap, do not retry; REFERENCE §1.4);
 * - an unknown `type` falls back to the HTTP status (`status` 0 = in-band, then `api_error`).
 * `code` carries `details.error_code` when present, else the Anthropic `type`.
 */
export function errorFromObject(obj: unknown, status: number): HubError {
  const o = (obj && typeof obj === "object" ? obj : {}) as Record<string, unknown>;
  const type = typeof o.type === "string" ? o.type : undefined;
  const message = typeof o.message === "string" && o.message.length > 0 ? o.message : type ?? "Upstream error";
  const details = o.details && typeof o.details === "object" ? (o.details as Record<string, unknown>) : undefined;
  const detailCode = typeof details?.error_code === "string" ? details.error_code : undefined;
  let kind = (type && kindForErrorType(type)) || (status > 0 ? kindForStatus(status) : "api_error");
  const lower = message.toLowerCase();
  if (kind === "invalid_request" && (lower.includes("prompt is too long") || lower.includes("context window") || lower.includes("context length"))) {
    kind = "context_length_exceeded";
  } else if (kind === "not_found" && lower.includes("model")) {
    kind = "model_not_found";
  } else if (kind === "rate_limit" && detailCode === "enforced_spend_limit_reached") {
    kind = "quota_exhausted";
  }
  const err = hubError(kind, message);
  if (status > 0) err.status = status;
  const code = detailCode ?? type;
  if (code) err.code = code;
  return err;
}

/**
 * Upstream HTTP error (status, body text, headers) → {@link HubError}; never throws (codec contract).
 * Reads Anthropic's `{"type":"error","error":{...}}` body; a non-JSON or foreign body keeps its text
 * (trimmed to 500 characters) and is classified by status. `status` is the upstream status;
 * `retryAfterSeconds` from `retry-after-ms` / `retry-after` (formats/retry-after.ts; an HTTP date is
 * measured against `now`, ms since the epoch), rounded up to whole seconds.
 */
export function parseError(status: number, body: string, headers: Headers, now?: number): HubError {
  const json = tryParseJson(body) as Record<string, unknown> | undefined;
  let err: HubError;
  if (json && typeof json === "object" && json.error && typeof json.error === "object") {
    err = errorFromObject(json.error, status);
  } else {
    const message = rawErrorText(body, MAX_RAW_MESSAGE) ?? `Upstream returned HTTP ${status}.`;
    err = { ...hubError(kindForStatus(status), message), status };
  }
  const ra = retryAfterSeconds(headers, now);
  if (ra !== undefined) err.retryAfterSeconds = Math.ceil(ra);
  return err;
}
