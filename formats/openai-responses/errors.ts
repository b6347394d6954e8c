/**
 * Errors in the OpenAI Responses format: the HTTP error envelope (REFERENCE §3.4, same as Chat's
 * §2.4: `{"error":{"message","type","param","code"}}`), and the vocabulary of in-band failures
 * (`response.failed` → `response.error.code`, `error` events; REFERENCE §3.2, §3.3, §5.2). The kind
 * and the wait are decided as for Chat (formats/openai-common/errors.ts).
 */
import { ERROR_STATUS, hubError, type ErrorKind, type HubError } from "../hub.ts";
import { classifyOpenAiError, openAiErrorCode, openAiRetryAfter } from "../openai-common/errors.ts";
import { rawErrorText } from "../raw-error-text.ts";

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

/**
 * Builds a {@link HubError} from an OpenAI-style error object (`{code, message, type, param}`), as
 * found in HTTP error bodies, `error` events (flat or nested) and `response.error`. `status` is the
 * HTTP status when known, else 0 (the kind's default status is then used). `headers` (HTTP errors
 * only) and `now` (ms since the epoch, for an HTTP-date `Retry-After`) feed `retryAfterSeconds`,
 * else the message's "try again in …" wording does.
 */
export function hubErrorFromOpenAi(obj: Record<string, unknown> | null | undefined, status: number, headers?: Headers, now?: number): HubError {
  const code = typeof obj?.code === "string" ? obj.code : undefined;
  const type = typeof obj?.type === "string" ? obj.type : undefined;
  const message = typeof obj?.message === "string" && obj.message ? obj.message : (code ?? type ?? "Upstream error");
  const kind = classifyOpenAiError(status, type, code, message);
  const err = hubError(kind, message, status > 0 ? { status } : {});
  if (code) err.code = code;
  if (typeof obj?.param === "string") err.param = obj.param;
  const retry = openAiRetryAfter(headers, status, message, now);
  if (retry !== undefined) err.retryAfterSeconds = retry;
  return err;
}

/**
 * The HTTP error body for `err` in the Responses format (same envelope as Chat, REFERENCE §3.4):
 * `{"error":{"message","type","param","code"}}`; `param`/`code` are null when unknown; `code` is the
 * error's own when an OpenAI client may know it, else the kind's default (openai-common/errors.ts
 * openAiErrorCode: a Gemini `RESOURCE_EXHAUSTED` is `rate_limit_exceeded` or `insufficient_quota`).
 *
 * A used-up usage limit (`err.usageLimitResetsAt`: a client key's budget) is written as the Codex
 * backend's (chatgpt.com `…/codex/responses`) error for a used-up plan: `type: "usage_limit_reached"`
 * and `resets_at` (Unix seconds, the second the message names). Codex (codex-rs `api_bridge.rs`
 * `map_api_error`) turns any other 429 into "exceeded retry limit, last status: 429 Too Many Requests"
 * and, over its WebSocket, first waits out the `retry-after` the frame carries (a day, for a 1d
 * budget); this one it reports at once: "You've hit your usage limit. Try again at <local time>."
 * (test/e2e/cli/over-budget.test.ts). Codex shows no 429's message, so the words are Codex's; the
 * message stays the gateway's for every other client.
 */
export function errorBody(err: HubError): { error: { message: string; type: string; param: string | null; code: string | null; resets_at?: number } } {
  if (err.usageLimitResetsAt !== undefined) {
    return {
      error: { message: err.message, type: "usage_limit_reached", param: err.param ?? null, code: err.code ?? null, resets_at: Math.floor(err.usageLimitResetsAt / 1000) },
    };
  }
  return {
    error: {
      message: err.message,
      type: TYPE_FOR_KIND[err.kind] ?? "server_error",
      param: err.param ?? null,
      code: openAiErrorCode(err, CODE_FOR_KIND[err.kind] ?? null),
    },
  };
}

/**
 * Provider HTTP error → hub error (codec `parseError`). Reads the OpenAI envelope
 * (`{"error":{…}}`), also a bare `{message,code}` object and non-JSON text (its first 500 characters
 * as the message, as Anthropic's parser keeps them; an empty body or an HTML page, a proxy's 502, gives
 * "Upstream returned HTTP N." as the Chat and Anthropic parsers do: formats/raw-error-text.ts); never
 * throws. The kind
 * comes from the shared OpenAI classifier (formats/openai-common/errors.ts: codes, then wording, then
 * the status; REFERENCE §5.2); `Retry-After` / `retry-after-ms` headers (an HTTP date measured
 * against `now`, ms since the epoch), OpenAI's `x-ratelimit-reset-*` on a 429 and a "try again in Ns"
 * hint become `retryAfterSeconds`.
 */
export function parseError(status: number, body: string, headers: Headers, now?: number): HubError {
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
  const fallbackMessage = rawErrorText(body, 500) ?? `Upstream returned HTTP ${status}.`;
  const err = hubErrorFromOpenAi(obj ?? { message: fallbackMessage }, status, headers, now);
  if (!err.status) err.status = ERROR_STATUS[err.kind];
  return err;
}
