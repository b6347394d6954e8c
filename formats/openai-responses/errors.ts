/**
 * Errors in the OpenAI Responses format: the HTTP error envelope (REFERENCE §3.4, same as Chat's
 * §2.4: `{"error":{"message","type","param","code"}}`), and the vocabulary of in-band failures
 * (`response.failed` → `response.error.code`, `error` events; REFERENCE §3.2, §3.3, §5.2).
 */
import { ERROR_STATUS, hubError, type ErrorKind, type HubError } from "../hub.ts";

/** OpenAI `error.type` per kind (REFERENCE §2.4, §5.2). */
const TYPE_FOR_KIND: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  context_length_exceeded: "invalid_request_error",
  request_too_large: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "invalid_request_error",
  model_not_found: "invalid_request_error",
  billing: "insufficient_quota",
  quota_exhausted: "insufficient_quota",
  rate_limit: "rate_limit_exceeded",
  overloaded: "server_error",
  timeout: "server_error",
  api_error: "server_error",
};

/** Default OpenAI `error.code` per kind, used when the hub error carries none. */
const CODE_FOR_KIND: Partial<Record<ErrorKind, string>> = {
  context_length_exceeded: "context_length_exceeded",
  request_too_large: "request_too_large",
  authentication: "invalid_api_key",
  model_not_found: "model_not_found",
  billing: "insufficient_quota",
  quota_exhausted: "insufficient_quota",
  rate_limit: "rate_limit_exceeded",
};

/**
 * `response.error.code` for an in-band `response.failed` (REFERENCE §3.2 and §5.2 "Responses
 * `response.error.code`" column). Codex reads this code: `context_length_exceeded` and
 * `insufficient_quota` are terminal for it, `rate_limit_exceeded` is retried after the delay named in
 * the message, anything else (`server_error`) is retried (REFERENCE §0, Codex `sse/responses.rs`).
 */
export function failedCodeForKind(kind: ErrorKind): string {
  switch (kind) {
    case "rate_limit":
      return "rate_limit_exceeded";
    case "quota_exhausted":
    case "billing":
      return "insufficient_quota";
    case "context_length_exceeded":
      return "context_length_exceeded";
    case "invalid_request":
    case "request_too_large":
      return "invalid_prompt";
    default:
      return "server_error";
  }
}

const CONTEXT_RE = /context[_ ]length|context window|maximum context length|prompt is too long/i;
const QUOTA_RE = /insufficient[_ ]quota|exceeded your current quota|billing/i;

/**
 * Error kind for an OpenAI error `code` / `type` (REFERENCE §2.4, §3.2, §5.2), then the message
 * (context-length and quota wording, for Responses-compatible servers without OpenAI's codes), then
 * the HTTP status (0 for in-band errors, which then default to `api_error`).
 */
export function kindForOpenAiError(code: string | undefined, type: string | undefined, status: number, message = ""): ErrorKind {
  const known = kindForCode(code, type);
  if (known) return known;
  if (CONTEXT_RE.test(message) && (status === 0 || status === 400 || status === 413)) return "context_length_exceeded";
  if (QUOTA_RE.test(message) && (status === 0 || status === 429 || status === 402)) return status === 402 ? "billing" : "quota_exhausted";
  return kindForStatus(status, type);
}

function kindForCode(code: string | undefined, type: string | undefined): ErrorKind | undefined {
  switch (code) {
    case "rate_limit_exceeded":
      return "rate_limit";
    case "insufficient_quota":
    case "usage_not_included":
      return "quota_exhausted";
    case "context_length_exceeded":
      return "context_length_exceeded";
    case "model_not_found":
      return "model_not_found";
    case "invalid_api_key":
      return "authentication";
    case "server_error":
      return "api_error";
    case "server_is_overloaded":
    case "overloaded":
      return "overloaded";
    case "invalid_prompt":
    case "unsupported_parameter":
    case "invalid_value":
    case "string_above_max_length":
      return "invalid_request";
  }
  switch (type) {
    case "insufficient_quota":
      return "quota_exhausted";
    case "rate_limit_exceeded":
    case "tokens":
    case "requests":
      return "rate_limit";
    case "authentication_error":
      return "authentication";
    case "permission_error":
      return "permission";
    case "not_found_error":
      return "not_found";
    case "server_error":
      return "api_error";
  }
  return undefined;
}

function kindForStatus(status: number, type: string | undefined): ErrorKind {
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 401) return "authentication";
  if (status === 402) return "billing";
  if (status === 403) return "permission";
  if (status === 404) return "not_found";
  if (status === 408 || status === 504) return "timeout";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit";
  if (status === 503 || status === 529) return "overloaded";
  if (type === "invalid_request_error") return "invalid_request";
  return "api_error";
}

/** Seconds named in OpenAI's "Please try again in 1.5s" / "in 250ms" wording, if any. */
export function retryHintSeconds(message: string): number | undefined {
  const m = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message);
  if (!m) return undefined;
  const n = Number(m[1]);
  return m[2]!.toLowerCase() === "ms" ? n / 1000 : n;
}

/**
 * Builds a {@link HubError} from an OpenAI-style error object (`{code, message, type, param}`), as
 * found in HTTP error bodies, `error` events (flat or nested) and `response.error`. `status` is the
 * HTTP status when known, else 0 (the kind's default status is then used).
 */
export function hubErrorFromOpenAi(obj: Record<string, unknown> | null | undefined, status: number): HubError {
  const code = typeof obj?.code === "string" ? obj.code : undefined;
  const type = typeof obj?.type === "string" ? obj.type : undefined;
  const message = typeof obj?.message === "string" && obj.message ? obj.message : (code ?? type ?? "Upstream error");
  const kind = kindForOpenAiError(code, type, status, message);
  const err = hubError(kind, message, status > 0 ? { status } : {});
  if (code) err.code = code;
  if (typeof obj?.param === "string") err.param = obj.param;
  const retry = retryHintSeconds(message);
  if (retry !== undefined) err.retryAfterSeconds = retry;
  return err;
}

/**
 * The HTTP error body for `err` in the Responses format (same envelope as Chat, REFERENCE §3.4):
 * `{"error":{"message","type","param","code"}}`; `param`/`code` are null when unknown.
 */
export function errorBody(err: HubError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return {
    error: {
      message: err.message,
      type: TYPE_FOR_KIND[err.kind] ?? "server_error",
      param: err.param ?? null,
      code: err.code ?? CODE_FOR_KIND[err.kind] ?? null,
    },
  };
}

/**
 * Parses OpenAI's `retry-after-ms` and a numeric `Retry-After` (seconds); undefined when absent. An
 * HTTP-date `Retry-After` is left to the caller (turning it into seconds needs a clock, and formats/
 * has none).
 */
function retryAfterFromHeaders(headers: Headers): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const ra = headers.get("retry-after");
  if (ra && ra.trim() !== "" && Number.isFinite(Number(ra))) return Number(ra);
  return undefined;
}

/**
 * Provider HTTP error → hub error (codec `parseError`). Reads the OpenAI envelope
 * (`{"error":{…}}`), also a bare `{message,code}` object and non-JSON text; never throws. The kind
 * comes from `error.code`, then `error.type`, then the status (REFERENCE §5.2); `Retry-After` /
 * `retry-after-ms` headers and a "try again in Ns" hint become `retryAfterSeconds`.
 */
export function parseError(status: number, body: string, headers: Headers): HubError {
  let obj: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === "object") {
      const p = parsed as Record<string, unknown>;
      obj = p.error && typeof p.error === "object" ? (p.error as Record<string, unknown>) : p;
    }
  } catch {
    obj = undefined;
  }
  const fallbackMessage = body.trim().slice(0, 500) || `Upstream HTTP ${status}`;
  const err = hubErrorFromOpenAi(obj ?? { message: fallbackMessage }, status);
  if (!err.status) err.status = ERROR_STATUS[err.kind];
  const fromHeaders = retryAfterFromHeaders(headers);
  if (fromHeaders !== undefined) err.retryAfterSeconds = fromHeaders;
  return err;
}
