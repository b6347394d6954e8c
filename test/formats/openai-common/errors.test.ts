/**
 * The shared OpenAI error classifier and wait readers (formats/openai-common/errors.ts,
 * formats/retry-after.ts): Chat and Responses decide the same kind and the same wait for the same
 * envelope.
 */
import { describe, expect, test } from "bun:test";
import { classifyOpenAiError, openAiRetryAfter, retryHintSeconds } from "../../../formats/openai-common/errors.ts";
import { retryAfterSeconds } from "../../../formats/retry-after.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

describe("classifyOpenAiError", () => {
  test("a 429 that says the quota is spent is quota_exhausted, whatever the code; other 429s are rate limits", () => {
    expect(classifyOpenAiError(429, undefined, undefined, "Quota exceeded for this project")).toBe("quota_exhausted");
    expect(classifyOpenAiError(429, "requests", "rate_limit_exceeded", "You exceeded your current quota")).toBe("quota_exhausted");
    expect(classifyOpenAiError(429, "insufficient_quota", "insufficient_quota", "x")).toBe("quota_exhausted");
    expect(classifyOpenAiError(429, "requests", "rate_limit_exceeded", "Rate limit reached. Please try again in 20ms.")).toBe("rate_limit");
    expect(classifyOpenAiError(0, undefined, "rate_limit_exceeded", "slow")).toBe("rate_limit");
    expect(classifyOpenAiError(402, undefined, undefined, "Insufficient balance")).toBe("billing");
  });

  test("codes, then wording, then the status; in-band errors by code", () => {
    expect(classifyOpenAiError(400, "invalid_request_error", "context_length_exceeded", "too long")).toBe("context_length_exceeded");
    expect(classifyOpenAiError(400, undefined, undefined, "This model's maximum context length is 8192 tokens")).toBe("context_length_exceeded");
    expect(classifyOpenAiError(401, "invalid_request_error", "invalid_api_key", "bad key")).toBe("authentication");
    expect(classifyOpenAiError(404, "not_found_error", undefined, "The model `x` does not exist")).toBe("model_not_found");
    expect(classifyOpenAiError(503, "server_error", "server_error", "busy")).toBe("overloaded");
    expect(classifyOpenAiError(500, undefined, undefined, "")).toBe("api_error");
    expect(classifyOpenAiError(0, undefined, "server_error", "failed")).toBe("api_error");
    expect(classifyOpenAiError(0, undefined, "invalid_prompt", "flagged")).toBe("invalid_request");
    expect(classifyOpenAiError(0, undefined, "server_is_overloaded", "busy")).toBe("overloaded");
  });

  test("Chat and Responses parse the same envelope to the same kind and wait", () => {
    const bodies: Array<[number, unknown, Record<string, string>]> = [
      [429, { error: { message: "Quota exceeded", type: "requests" } }, {}],
      [429, { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } }, { "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s" }],
      [429, { error: { message: "slow. Please try again in 1.5s." } }, {}],
      [503, { error: { message: "busy", code: "server_error" } }, { "retry-after-ms": "250" }],
      [400, { error: { message: "Unknown parameter: 'max_tokens'.", type: "invalid_request_error", code: "unknown_parameter" } }, {}],
    ];
    for (const [status, body, headers] of bodies) {
      const chat = openaiChat.parseError(status, JSON.stringify(body), new Headers(headers));
      const resp = openaiResponses.parseError(status, JSON.stringify(body), new Headers(headers));
      expect({ kind: resp.kind, wait: resp.retryAfterSeconds }).toEqual({ kind: chat.kind, wait: chat.retryAfterSeconds });
    }
  });
});

describe("waits", () => {
  test("retryAfterSeconds: ms header first, delta seconds kept fractional, an HTTP date only against a given now", () => {
    expect(retryAfterSeconds(new Headers({ "retry-after-ms": "1500", "retry-after": "9" }))).toBe(1.5);
    expect(retryAfterSeconds(new Headers({ "retry-after": "3" }))).toBe(3);
    const now = Date.parse("2026-01-01T00:00:00Z");
    const dated = new Headers({ "retry-after": "Thu, 01 Jan 2026 00:01:00 GMT" });
    expect(retryAfterSeconds(dated, now)).toBe(60);
    expect(retryAfterSeconds(dated, now + 120_000)).toBe(0);
    expect(retryAfterSeconds(dated)).toBeUndefined();
    expect(retryAfterSeconds(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryAfterSeconds(undefined)).toBeUndefined();
  });

  test("openAiRetryAfter: headers, then x-ratelimit-reset on a 429, then the message's hint", () => {
    const reset = new Headers({ "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s" });
    expect(openAiRetryAfter(reset, 429, "try again in 2s")).toBe(360);
    expect(openAiRetryAfter(reset, 500, "try again in 2s")).toBe(2);
    expect(openAiRetryAfter(undefined, 0, "Please try again in 250ms.")).toBe(0.25);
    expect(retryHintSeconds("try again in 2 minutes")).toBe(120);
    expect(retryHintSeconds("later")).toBeUndefined();
  });
});
