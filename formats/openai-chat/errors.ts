/**
 * Chat Completions error bodies, both ways (REFERENCE §2.4, §5.2).
 *
 * - {@link errorBody}: hub error → `{"error":{"message","type","param","code"}}`, the shape OpenAI
 *   sends for HTTP errors and mid-stream (the OpenAI SDK raises `APIError` on any SSE payload whose
 *   top-level `error` is truthy, REFERENCE §0).
 * - {@link parseError}: provider HTTP error → hub error, for OpenAI and OpenAI-compatible servers,
 *   including vLLM's `{"object":"error","message",…}` and FastAPI's `{"detail":…}`, with the wait the
 *   provider asked for (`retry-after-ms`, `retry-after`, OpenAI `x-ratelimit-reset-*`, "try again in
 *   1.5s" in the message).
 * - {@link errorFromPayload}: an in-band error payload (a stream frame) → hub error.
 */
import { ERROR_STATUS, type ErrorKind, type HubError } from "../hub.ts";

const isObj = (x: unknown): x is Record<string, any> => typeof x === "object" && x !== null && !Array.isArray(x);
const str = (x: unknown): string | undefined => (typeof x === "string" && x.length > 0 ? x : undefined);

/** The Chat error object inside `{"error": …}`. */
export interface ChatErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

/** Per kind: OpenAI `error.type` and the default `error.code` (REFERENCE §5.2). */
const KIND_TO_CHAT: Record<ErrorKind, { type: string; code: string | null }> = {
  invalid_request: { type: "invalid_request_error", code: null },
  context_length_exceeded: { type: "invalid_request_error", code: "context_length_exceeded" },
  request_too_large: { type: "invalid_request_error", code: "request_too_large" },
  authentication: { type: "authentication_error", code: "invalid_api_key" },
  permission: { type: "permission_error", code: null },
  not_found: { type: "invalid_request_error", code: "not_found" },
  model_not_found: { type: "invalid_request_error", code: "model_not_found" },
  billing: { type: "insufficient_quota", code: "insufficient_quota" },
  quota_exhausted: { type: "insufficient_quota", code: "insufficient_quota" },
  rate_limit: { type: "rate_limit_error", code: "rate_limit_exceeded" },
  overloaded: { type: "server_error", code: "overloaded" },
  timeout: { type: "server_error", code: "timeout" },
  api_error: { type: "server_error", code: null },
};

/**
 * Hub error → Chat error object (REFERENCE §5.2). `code` is the error's own code when it has one, else
 * the kind's default; `param` is `null` unless known. Used for HTTP error bodies and, wrapped in
 * `{"error": …}`, for the in-band error frame after commit (SPEC 6.4).
 */
export function chatErrorObject(err: HubError): ChatErrorObject {
  const m = KIND_TO_CHAT[err.kind] ?? KIND_TO_CHAT.api_error;
  return { message: err.message, type: m.type, param: err.param ?? null, code: err.code ?? m.code };
}

/** Hub error → Chat HTTP error body `{"error":{message,type,param,code}}` (REFERENCE §2.4). */
export function errorBody(err: HubError): { error: ChatErrorObject } {
  return { error: chatErrorObject(err) };
}

const CONTEXT_RE = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|reduce the length/i;
const QUOTA_RE = /insufficient[_ ]quota|exceeded your current quota|quota exceeded|billing|credit balance|spend(ing)? (cap|limit)/i;
const OVERLOAD_RE = /overloaded|no capacity|capacity|temporarily unavailable/i;
const RETRY_IN_RE = /try again in\s+(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?)\b/i;

/**
 * Classifies an error by HTTP status (0 when unknown, as for in-band errors), the provider's `type`
 * and `code`, and its message (REFERENCE §5.2, SPEC 6.3).
 */
function classify(status: number, type: string, code: string, message: string): ErrorKind {
  const tc = `${type} ${code}`.toLowerCase();
  if (tc.includes("insufficient_quota") || tc.includes("billing")) return status === 402 ? "billing" : "quota_exhausted";
  if (status === 402) return "billing";
  if (status === 429 && !tc.includes("context_length")) return QUOTA_RE.test(message) ? "quota_exhausted" : "rate_limit";
  if (tc.includes("context_length") || CONTEXT_RE.test(message)) return "context_length_exceeded";
  if (tc.includes("model_not_found")) return "model_not_found";
  if (tc.includes("invalid_api_key") || tc.includes("authentication")) return "authentication";
  if (tc.includes("permission")) return "permission";
  if (tc.includes("rate_limit")) return QUOTA_RE.test(message) ? "quota_exhausted" : "rate_limit";
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
    case 429:
      return QUOTA_RE.test(message) ? "quota_exhausted" : "rate_limit";
    case 503:
    case 529:
      return "overloaded";
  }
  if (status >= 500) return OVERLOAD_RE.test(message) ? "overloaded" : "api_error";
  if (status >= 400) return "invalid_request";
  if (tc.includes("invalid_request")) return "invalid_request";
  if (OVERLOAD_RE.test(message)) return "overloaded";
  return "api_error";
}

/** Parses an OpenAI duration such as `1s`, `6m0s`, `20ms`, `1h2m3.5s` into seconds. */
function parseDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = false;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    matched = true;
    const n = Number(m[1]);
    total += m[2] === "ms" ? n / 1000 : m[2] === "h" ? n * 3600 : m[2] === "m" ? n * 60 : n;
  }
  return matched ? total : undefined;
}

/** Seconds to wait, from headers and message (REFERENCE §5.2: keep `retry-after`). */
function retryAfter(headers: Headers | undefined, status: number, message: string): number | undefined {
  if (headers) {
    const ms = headers.get("retry-after-ms");
    if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms) / 1000;
    const ra = headers.get("retry-after");
    if (ra) {
      const t = ra.trim();
      if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
      const date = Date.parse(t);
      // An HTTP date is relative to the wall clock; judgement: read it here rather than drop it.
      if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
    }
    if (status === 429) {
      const waits = [headers.get("x-ratelimit-reset-requests"), headers.get("x-ratelimit-reset-tokens")]
        .map((h) => (h ? parseDuration(h) : undefined))
        .filter((x): x is number => x !== undefined);
      if (waits.length > 0) return Math.max(...waits);
    }
  }
  const m = RETRY_IN_RE.exec(message);
  if (m) {
    const n = Number(m[1]);
    const unit = m[2].toLowerCase();
    return unit === "ms" ? n / 1000 : unit.startsWith("m") ? n * 60 : n;
  }
  return undefined;
}

/** Pulls message/type/code/param out of any of the error shapes OpenAI-compatible servers send. */
function fields(payload: unknown): { message?: string; type?: string; code?: string; param?: string; status?: number } {
  if (Array.isArray(payload)) return fields(payload[0]);
  if (!isObj(payload)) return {};
  const e = payload.error;
  if (isObj(e)) {
    return {
      message: str(e.message) ?? (typeof e.metadata?.raw === "string" ? e.metadata.raw : undefined),
      type: str(e.type) ?? str(e.status),
      code: typeof e.code === "number" ? undefined : str(e.code),
      param: str(e.param),
      status: typeof e.code === "number" ? e.code : undefined,
    };
  }
  if (typeof e === "string") return { message: e, type: str(payload.type), code: str(payload.code) };
  // vLLM / SGLang: {"object":"error","message":…,"type":…,"param":…,"code":400}
  if (payload.object === "error" || str(payload.message)) {
    return {
      message: str(payload.message),
      type: str(payload.type),
      code: typeof payload.code === "number" ? undefined : str(payload.code),
      param: str(payload.param),
      status: typeof payload.code === "number" ? payload.code : undefined,
    };
  }
  // FastAPI: {"detail": "…"} or {"detail": [{msg}]}
  if (typeof payload.detail === "string") return { message: payload.detail };
  if (Array.isArray(payload.detail) && isObj(payload.detail[0]) && str(payload.detail[0].msg)) {
    return { message: payload.detail[0].msg };
  }
  return {};
}

/**
 * Provider HTTP error → hub error; never throws (codec contract). `status` stays the provider's status
 * (what the client is answered with before commit) unless it is not an error status, then the kind's
 * default. The message is the provider's `message` field; when the body has none, a generic sentence
 * (judgement: raw upstream bodies are not forwarded, they may echo credentials or URLs, REFERENCE §5.2).
 */
export function parseError(status: number, body: string, headers: Headers): HubError {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    payload = undefined;
  }
  const f = fields(payload);
  const message = f.message ?? `Upstream returned HTTP ${status}.`;
  const kind = classify(status, f.type ?? "", f.code ?? "", message);
  const err: HubError = { kind, message, status: status >= 400 ? status : ERROR_STATUS[kind] };
  if (f.code) err.code = f.code;
  if (f.param) err.param = f.param;
  const wait = retryAfter(headers, status, message);
  if (wait !== undefined) err.retryAfterSeconds = wait;
  return err;
}

/**
 * An in-band error payload from a Chat stream (`{"error":{…}}`, `{"error":"…"}`, vLLM
 * `{"object":"error",…}`) → hub error. The status is the payload's numeric code when it carries one
 * (OpenRouter puts the HTTP status in `error.code`), else the kind's default. Returns `undefined` when
 * the payload is not an error.
 */
export function errorFromPayload(payload: unknown): HubError | undefined {
  if (!isObj(payload)) return undefined;
  const hasError = (payload.error !== undefined && payload.error !== null && payload.error !== false) || payload.object === "error";
  if (!hasError) return undefined;
  const f = fields(payload);
  const message = f.message ?? "The upstream reported an error.";
  const status = f.status && f.status >= 400 && f.status < 600 ? f.status : 0;
  const kind = classify(status, f.type ?? "", f.code ?? "", message);
  const err: HubError = { kind, message, status: status || ERROR_STATUS[kind] };
  if (f.code) err.code = f.code;
  if (f.param) err.param = f.param;
  const wait = retryAfter(undefined, status, message);
  if (wait !== undefined) err.retryAfterSeconds = wait;
  return err;
}
