/**
 * What OpenAI Chat Completions and Responses share about provider errors (REFERENCE §2.4, §3.4,
 * §5.2): both read the same envelope `{"error":{"message","type","param","code"}}` (and the in-band
 * `response.failed` / `error` objects of the same shape), so one classifier decides the hub
 * {@link ErrorKind} for both, and one reader names the wait. Pure functions.
 */
import type { ErrorKind, HubError } from "../hub.ts";
import { parseGoDuration, retryAfterSeconds } from "../retry-after.ts";

/** Wording of a context-window overflow, for servers that send no `context_length_exceeded` code. */
const CONTEXT_RE = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|reduce the length/i;
/** Wording of a spent quota or balance (as opposed to a momentary rate limit). */
const QUOTA_RE = /insufficient[_ ]quota|exceeded your current quota|quota exceeded|billing|credit balance|spend(ing)? (cap|limit)/i;
/** Wording of a server without capacity. */
const OVERLOAD_RE = /overloaded|no capacity|capacity|temporarily unavailable/i;
/** OpenAI's "Please try again in 1.5s" / "in 250ms" / "in 2 minutes". */
const RETRY_IN_RE = /try again in\s+(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?)\b/i;
/** `error.code` values that name a request the server refused as invalid (Responses' vocabulary). */
const INVALID_CODES = new Set(["invalid_prompt", "unsupported_parameter", "unknown_parameter", "invalid_value", "string_above_max_length"]);

/**
 * The hub error kind of an OpenAI-style error (REFERENCE §5.2, SPEC 6.3). `status` is the HTTP status,
 * 0 for an in-band error; `type`, `code` and `message` are the error object's. In order:
 * 1. `insufficient_quota` / `billing` / `usage_not_included` in type or code → `quota_exhausted`
 *    (`billing` on a 402); any other 402 → `billing`;
 * 2. a `context_length…` code → `context_length_exceeded`;
 * 3. a 429, or a rate-limit code/type (`rate_limit_exceeded`, `rate_limit_error`, the `tokens` /
 *    `requests` types): `quota_exhausted` when the message says the quota or balance is spent
 *    ("exceeded your current quota", "quota exceeded", "credit balance", …), else `rate_limit` — the
 *    wording rule pipeline/classify.ts applies too, so a 429 "quota exceeded" is one kind everywhere;
 * 4. below 500, context-window wording → `context_length_exceeded`;
 * 5. codes/types: `model_not_found`; `invalid_api_key` / `authentication…` → `authentication`;
 *    `permission…` → `permission`; `overloaded` / `server_is_overloaded` → `overloaded`; `timeout…`;
 * 6. the status: 400/422 invalid, 401, 403, 404 (`model_not_found` when the message names a model),
 *    408/504 timeout, 413, 503/529 overloaded; other 5xx `overloaded` by wording else `api_error`;
 *    other 4xx `invalid_request`;
 * 7. in-band (status 0): `not_found_error` → `not_found`; `invalid_request…` or an invalid-request
 *    code (`invalid_prompt`, `unsupported_parameter`, …) → `invalid_request`; overload wording →
 *    `overloaded`; else `api_error` (`server_error` included).
 */
export function classifyOpenAiError(status: number, type: string | undefined, code: string | undefined, message: string): ErrorKind {
  const t = (type ?? "").toLowerCase();
  const c = (code ?? "").toLowerCase();
  const tc = `${t} ${c}`;
  if (tc.includes("insufficient_quota") || tc.includes("billing") || c === "usage_not_included") return status === 402 ? "billing" : "quota_exhausted";
  if (status === 402) return "billing";
  if (tc.includes("context_length")) return "context_length_exceeded";
  if (status === 429 || tc.includes("rate_limit") || t === "tokens" || t === "requests") return QUOTA_RE.test(message) ? "quota_exhausted" : "rate_limit";
  if (status < 500 && CONTEXT_RE.test(message)) return "context_length_exceeded";
  if (tc.includes("model_not_found")) return "model_not_found";
  if (tc.includes("invalid_api_key") || tc.includes("authentication")) return "authentication";
  if (tc.includes("permission")) return "permission";
  if (tc.includes("overloaded")) return "overloaded";
  if (tc.includes("timeout")) return "timeout";
  switch (status) {
    case 400:
    case 422:
      return "invalid_request";
    case 401:
      return "authentication";
    case 403:
      return "permission";
    case 404:
      return /model/i.test(message) ? "model_not_found" : "not_found";
    case 408:
    case 504:
      return "timeout";
    case 413:
      return "request_too_large";
    case 503:
    case 529:
      return "overloaded";
  }
  if (status >= 500) return OVERLOAD_RE.test(message) ? "overloaded" : "api_error";
  if (status >= 400) return "invalid_request";
  if (t === "not_found_error") return "not_found";
  if (tc.includes("invalid_request") || INVALID_CODES.has(c)) return "invalid_request";
  if (OVERLOAD_RE.test(message)) return "overloaded";
  return "api_error";
}

/** Seconds named in OpenAI's "Please try again in 1.5s" / "in 250ms" / "in 2 minutes" wording, if any. */
export function retryHintSeconds(message: string): number | undefined {
  const m = RETRY_IN_RE.exec(message);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2]!.toLowerCase();
  return unit === "ms" ? n / 1000 : unit.startsWith("m") ? n * 60 : n;
}


/**
 * Seconds to wait after an OpenAI-style error, or undefined: the `retry-after-ms` / `Retry-After`
 * headers ({@link retryAfterSeconds}, an HTTP date measured against `now`, ms since the epoch), else
 * on a 429 the longer of OpenAI's `x-ratelimit-reset-requests` / `-tokens` (`6m0s`), else the "try
 * again in …" wording of `message` ({@link retryHintSeconds}). `headers` is undefined for in-band errors.
 */
export function openAiRetryAfter(headers: Headers | undefined, status: number, message: string, now?: number): number | undefined {
  const fromHeaders = retryAfterSeconds(headers, now);
  if (fromHeaders !== undefined) return fromHeaders;
  if (headers && status === 429) {
    let reset: number | undefined;
    for (const name of ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"]) {
      const v = headers.get(name);
      const ms = v ? parseGoDuration(v) : undefined;
      const d = ms === undefined ? undefined : ms / 1000;
      if (d !== undefined && (reset === undefined || d > reset)) reset = d;
    }
    if (reset !== undefined) return reset;
  }
  return retryHintSeconds(message);
}

/** A `google.rpc.Code` name (`RESOURCE_EXHAUSTED`) or a Google `ErrorInfo.reason` (`API_KEY_INVALID`): upper snake case. */
const GOOGLE_CODE_RE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/**
 * The `error.code` an OpenAI client (Chat or Responses) reads for a hub error (REFERENCE §5.2): the
 * error's own code when it is one an OpenAI client may know (an OpenAI or compatible server's, the
 * gateway's own `key_budget_exceeded`, an Anthropic `overloaded_error`), else `fallback`, the kind's
 * default. An unknown model is always `model_not_found`. A Gemini error's code is its Google status or
 * `ErrorInfo` reason (`RESOURCE_EXHAUSTED`, `API_KEY_INVALID`, formats/gemini/errors.ts), which no
 * OpenAI client checks for: a Gemini 429 reaches it as `rate_limit_exceeded` / `insufficient_quota` as
 * the kind says (until 2026-12-07 it read `"code":"RESOURCE_EXHAUSTED"`).
 */
export function openAiErrorCode(err: HubError, fallback: string | null): string | null {
  if (err.kind === "model_not_found") return "model_not_found";
  if (err.code === undefined || GOOGLE_CODE_RE.test(err.code)) return fallback;
  return err.code;
}

