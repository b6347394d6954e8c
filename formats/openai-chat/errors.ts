/**
 * Chat Completions error bodies, both ways (REFERENCE §2.4, §5.2).
 *
 * - {@link errorBody}: hub error → `{"error":{"message","type","param","code"}}`, the shape OpenAI
 *   sends for HTTP errors and mid-stream (the OpenAI SDK raises `APIError` on any SSE payload whose
 *   top-level `error` is truthy, REFERENCE §0).
 * - {@link parseError}: provider HTTP error → hub error, for OpenAI and OpenAI-compatible servers,
 *   including vLLM's `{"object":"error","message",…}` and FastAPI's `{"detail":…}`, with the wait the
 *   provider asked for (`retry-after-ms`, `retry-after`, OpenAI `x-ratelimit-reset-*`, "try again in
 *   1.5s" in the message). The kind and the wait are decided as for Responses
 *   (formats/openai-common/errors.ts).
 * - {@link errorFromPayload}: an in-band error payload (a stream frame) → hub error.
 */
import { ERROR_STATUS, type ErrorKind, type HubError } from "../hub.ts";
import { classifyOpenAiError, openAiErrorCode, openAiRetryAfter } from "../openai-common/errors.ts";
import { isObj, nonEmptyString } from "../json.ts";

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
 * Hub error → Chat error object (REFERENCE §5.2). `code` is the error's own code when it has one an
 * OpenAI client may know, else the kind's default (formats/openai-common/errors.ts openAiErrorCode: a
 * Gemini error's Google status, `RESOURCE_EXHAUSTED`, becomes `rate_limit_exceeded` /
 * `insufficient_quota`), and an unknown model always `model_not_found` (the §5.2 row: a Gemini 404's
 * own code is its status `NOT_FOUND`, an Anthropic one's `not_found_error`, which an OpenAI client
 * checking for `model_not_found` did not recognise); `param` is `null` unless known. Used for HTTP error bodies and, wrapped in
 * `{"error": …}`, for the in-band error frame after commit (SPEC 6.4).
 */
export function chatErrorObject(err: HubError): ChatErrorObject {
  const m = KIND_TO_CHAT[err.kind] ?? KIND_TO_CHAT.api_error;
  return { message: err.message, type: m.type, param: err.param ?? null, code: openAiErrorCode(err, m.code) };
}

/** Hub error → Chat HTTP error body `{"error":{message,type,param,code}}` (REFERENCE §2.4). */
export function errorBody(err: HubError): { error: ChatErrorObject } {
  return { error: chatErrorObject(err) };
}

/** Pulls message/type/code/param out of any of the error shapes OpenAI-compatible servers send. */
function fields(payload: unknown): { message?: string; type?: string; code?: string; param?: string; status?: number } {
  if (Array.isArray(payload)) return fields(payload[0]);
  if (!isObj(payload)) return {};
  const e = payload.error;
  if (isObj(e)) {
    return {
      message: nonEmptyString(e.message) ?? (isObj(e.metadata) && typeof e.metadata.raw === "string" ? e.metadata.raw : undefined),
      type: nonEmptyString(e.type) ?? nonEmptyString(e.status),
      code: typeof e.code === "number" ? undefined : nonEmptyString(e.code),
      param: nonEmptyString(e.param),
      status: typeof e.code === "number" ? e.code : undefined,
    };
  }
  if (typeof e === "string") return { message: e, type: nonEmptyString(payload.type), code: nonEmptyString(payload.code) };
  // vLLM / SGLang: {"object":"error","message":…,"type":…,"param":…,"code":400}
  if (payload.object === "error" || nonEmptyString(payload.message)) {
    return {
      message: nonEmptyString(payload.message),
      type: nonEmptyString(payload.type),
      code: typeof payload.code === "number" ? undefined : nonEmptyString(payload.code),
      param: nonEmptyString(payload.param),
      status: typeof payload.code === "number" ? payload.code : undefined,
    };
  }
  // FastAPI: {"detail": "…"} or {"detail": [{msg}]}
  if (typeof payload.detail === "string") return { message: payload.detail };
  const first = Array.isArray(payload.detail) ? payload.detail[0] : undefined;
  if (isObj(first) && nonEmptyString(first.msg)) return { message: nonEmptyString(first.msg) };
  return {};
}

/**
 * Provider HTTP error → hub error; never throws (codec contract). `status` stays the provider's status
 * (what the client is answered with before commit) unless it is not an error status, then the kind's
 * default. The message is the provider's `message` field; when the body has none, a generic sentence
 * (judgement: raw upstream bodies are not forwarded, they may echo credentials or URLs, REFERENCE §5.2).
 * `now` (ms since the epoch) measures an HTTP-date `Retry-After`; without it such a header is not read.
 */
export function parseError(status: number, body: string, headers: Headers, now?: number): HubError {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    payload = undefined;
  }
  const f = fields(payload);
  const message = f.message ?? `Upstream returned HTTP ${status}.`;
  const kind = classifyOpenAiError(status, f.type, f.code, message);
  const err: HubError = { kind, message, status: status >= 400 ? status : ERROR_STATUS[kind] };
  if (f.code) err.code = f.code;
  if (f.param) err.param = f.param;
  const wait = openAiRetryAfter(headers, status, message, now);
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
  const kind = classifyOpenAiError(status, f.type, f.code, message);
  const err: HubError = { kind, message, status: status || ERROR_STATUS[kind] };
  if (f.code) err.code = f.code;
  if (f.param) err.param = f.param;
  const wait = openAiRetryAfter(undefined, status, message);
  if (wait !== undefined) err.retryAfterSeconds = wait;
  return err;
}
