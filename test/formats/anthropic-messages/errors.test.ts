import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import { ERROR_STATUS, type ErrorKind } from "../../../formats/hub.ts";
import { FIXTURES } from "../../support/fixtures.ts";

const parseError = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  anthropicMessages.parseError(status, typeof body === "string" ? body : JSON.stringify(body), new Headers(headers));
const body = (type: string, message: string, extra: Record<string, unknown> = {}) => ({ type: "error", error: { type, message, ...extra } });

describe("errorBody (REFERENCE §1.4, §5.2)", () => {
  test("every hub kind maps to an Anthropic error type; shape {type:error, error:{type,message}}", () => {
    const expected: Record<ErrorKind, string> = {
      invalid_request: "invalid_request_error",
      context_length_exceeded: "invalid_request_error",
      request_too_large: "request_too_large",
      authentication: "authentication_error",
      permission: "permission_error",
      not_found: "not_found_error",
      model_not_found: "not_found_error",
      billing: "billing_error",
      quota_exhausted: "rate_limit_error",
      rate_limit: "rate_limit_error",
      overloaded: "overloaded_error",
      timeout: "timeout_error",
      api_error: "api_error",
    };
    for (const kind of Object.keys(expected) as ErrorKind[]) {
      expect(anthropicMessages.errorBody({ kind, status: ERROR_STATUS[kind], message: "m" })).toEqual({
        type: "error",
        error: { type: expected[kind], message: "m" },
      });
    }
  });
});

describe("parseError", () => {
  test("the recorded 400 body", async () => {
    const text = await Bun.file(`${FIXTURES}/recorded/anthropic-messages/error-invalid-request.json`).text();
    const err = anthropicMessages.parseError(400, text, new Headers());
    expect(err.kind).toBe("invalid_request");
    expect(err.status).toBe(400);
    expect(err.message.startsWith("messages.2.content.0: unexpected `tool_use_id`")).toBe(true);
  });

  test("types by meaning: overloaded 529, rate limit with retry-after, prompt too long, model not found, spend cap", () => {
    expect(parseError(529, body("overloaded_error", "Overloaded"))).toMatchObject({ kind: "overloaded", status: 529 });
    expect(parseError(429, body("rate_limit_error", "slow"), { "retry-after": "17" })).toMatchObject({ kind: "rate_limit", status: 429, retryAfterSeconds: 17 });
    expect(parseError(400, body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"))).toMatchObject({ kind: "context_length_exceeded" });
    expect(parseError(404, body("not_found_error", "model: claude-nope"))).toMatchObject({ kind: "model_not_found", status: 404 });
    expect(parseError(429, body("rate_limit_error", "cap", { details: { error_code: "enforced_spend_limit_reached" } }))).toMatchObject({
      kind: "quota_exhausted",
      code: "enforced_spend_limit_reached",
    });
  });

  test("non-JSON bodies are classified by status and keep their text (trimmed); HTML pages are not passed on", () => {
    expect(parseError(503, "<html>upstream down</html>")).toMatchObject({ kind: "overloaded", status: 503, message: "Upstream returned HTTP 503." });
    expect(parseError(503, "  upstream down ")).toMatchObject({ kind: "overloaded", status: 503, message: "upstream down" });
    expect(parseError(502, "")).toMatchObject({ kind: "api_error", status: 502 });
    expect(parseError(401, "nope")).toMatchObject({ kind: "authentication" });
    expect(parseError(500, "x".repeat(2000)).message.length).toBe(500);
  });

  test("retry-after-ms, retry-after seconds and HTTP date (against the caller's now), in whole seconds", () => {
    const rl = body("rate_limit_error", "slow");
    expect(parseError(429, rl, { "retry-after-ms": "1500" }).retryAfterSeconds).toBe(2);
    expect(parseError(429, rl, { "retry-after": "3" }).retryAfterSeconds).toBe(3);
    const now = Date.parse("2026-01-01T00:00:00Z");
    const dated = new Headers({ "retry-after": "Thu, 01 Jan 2026 00:01:00 GMT" });
    expect(anthropicMessages.parseError(429, JSON.stringify(rl), dated, now).retryAfterSeconds).toBe(60);
    expect(anthropicMessages.parseError(429, JSON.stringify(rl), dated).retryAfterSeconds).toBeUndefined();
    expect(parseError(429, rl, { "retry-after": "soon" }).retryAfterSeconds).toBeUndefined();
    expect(parseError(429, rl).retryAfterSeconds).toBeUndefined();
  });
});
