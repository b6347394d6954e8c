import { describe, expect, test } from "bun:test";
import { gemini } from "../../../formats/gemini/index.ts";
import { anthropicMessages as anthropic } from "../../../formats/anthropic-messages/index.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";
import { parseDuration } from "../../../formats/gemini/errors.ts";
import { hubError } from "../../../formats/hub.ts";
import { recordedBytes } from "../../support/fixtures.ts";

const none = new Headers();
const body = (error: Record<string, unknown>) => JSON.stringify({ error });
const quota = (quotaId: string, extra: Record<string, unknown> = {}) => ({
  "@type": "type.googleapis.com/google.rpc.QuotaFailure",
  violations: [{ quotaId, ...extra }],
});

describe("gemini parseError", () => {
  test("error-429-retry-info.json: per-minute QuotaFailure → rate_limit, RetryInfo 34.4s → retryAfterSeconds 35", async () => {
    const text = new TextDecoder().decode(await recordedBytes("gemini/error-429-retry-info.json"));
    expect(gemini.parseError(429, text, none)).toEqual({
      kind: "rate_limit",
      status: 429,
      message: "You exceeded your current quota, please check your plan.",
      code: "RESOURCE_EXHAUSTED",
      retryAfterSeconds: 35,
    });
  });

  test("RESOURCE_EXHAUSTED is quota_exhausted for a per-day quota or a zero quota, rate_limit for per-minute or no QuotaFailure", () => {
    const cases: Array<[unknown[], string]> = [
      [[quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier")], "quota_exhausted"],
      [[quota("GenerateContentInputTokensPerModelPerMinute-FreeTier", { quotaValue: "0" })], "quota_exhausted"],
      [[quota("SomeQuotaWithoutAWindow")], "quota_exhausted"],
      [[quota("GenerateRequestsPerMinutePerProjectPerModel")], "rate_limit"],
      [[], "rate_limit"],
    ];
    for (const [details, kind] of cases) {
      const e = gemini.parseError(429, body({ code: 429, message: "exhausted", status: "RESOURCE_EXHAUSTED", details }), none);
      expect(e.kind).toBe(kind as never);
      expect(e.status).toBe(429);
    }
  });

  test("status vocabulary → hub kinds (REFERENCE §4.4, §5.2)", () => {
    const cases: Array<[number, string, string, string, number]> = [
      [400, "INVALID_ARGUMENT", "Invalid JSON payload received.", "invalid_request", 400],
      [400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "context_length_exceeded", 400],
      [400, "FAILED_PRECONDITION", "User location is not supported for the API use.", "invalid_request", 400],
      [401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", "authentication", 401],
      [403, "PERMISSION_DENIED", "Permission denied on resource project x.", "permission", 403],
      [404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta", "model_not_found", 404],
      [404, "NOT_FOUND", "Requested entity was not found.", "not_found", 404],
      [500, "INTERNAL", "An internal error has occurred.", "api_error", 500],
      [503, "UNAVAILABLE", "The model is overloaded. Please try again later.", "overloaded", 503],
      [504, "DEADLINE_EXCEEDED", "Deadline exceeded.", "timeout", 504],
    ];
    for (const [http, status, message, kind, out] of cases) {
      expect(gemini.parseError(http, body({ code: http, message, status }), none)).toEqual({ kind: kind as never, status: out, message, code: status });
    }
  });

  test("an invalid API key (400 + ErrorInfo API_KEY_INVALID) is an authentication failure, and keys are never echoed", () => {
    const e = gemini.parseError(
      400,
      body({
        code: 400,
        message: "API key not valid. Please pass a valid API key. (key AIzaSyA1234567890abcdefghijklmnopqrstuv)",
        status: "INVALID_ARGUMENT",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }],
      }),
      none,
    );
    expect(e).toMatchObject({ kind: "authentication", status: 401, code: "API_KEY_INVALID" });
    expect(e.message).not.toContain("AIza");
    expect(e.message).toContain("[redacted]");
  });

  test("retry delay from the Retry-After header, or from the message, when there is no RetryInfo", () => {
    expect(gemini.parseError(429, body({ code: 429, message: "slow down", status: "RESOURCE_EXHAUSTED" }), new Headers({ "retry-after": "12" })).retryAfterSeconds).toBe(12);
    expect(gemini.parseError(429, body({ code: 429, message: "Please retry in 3.2s.", status: "RESOURCE_EXHAUSTED" }), none).retryAfterSeconds).toBe(4);
    expect(gemini.parseError(500, body({ code: 500, message: "x", status: "INTERNAL" }), none).retryAfterSeconds).toBeUndefined();
  });

  test("bodies that are not a Status: array-wrapped, HTML, empty — classified by HTTP status, never thrown", () => {
    const wrapped = JSON.stringify([{ error: { code: 503, message: "busy", status: "UNAVAILABLE" } }]);
    expect(gemini.parseError(503, wrapped, none)).toMatchObject({ kind: "overloaded", message: "busy" });
    // an HTML page says nothing a client can use, whatever its content-type (it was passed on as the message)
    expect(gemini.parseError(502, "<html>Bad Gateway</html>", none)).toMatchObject({ kind: "api_error", status: 502, message: "Gemini returned HTTP 502." });
    expect(gemini.parseError(500, "  <!DOCTYPE html><html><body>boom</body></html>", new Headers({ "content-type": "text/plain" }))).toMatchObject({ kind: "api_error", status: 500, message: "Gemini returned HTTP 500." });
    expect(gemini.parseError(500, "plain words from a proxy", none)).toMatchObject({ message: "plain words from a proxy" });
    expect(gemini.parseError(429, "", none)).toMatchObject({ kind: "rate_limit", status: 429, message: "Gemini returned HTTP 429." });
    expect(gemini.parseError(413, "too big", none)).toMatchObject({ kind: "request_too_large", status: 413 });
  });

  test("parseDuration reads proto Duration strings", () => {
    expect(parseDuration("34.4s")).toBe(34.4);
    expect(parseDuration("5s")).toBe(5);
    expect(parseDuration("5")).toBeUndefined();
    expect(parseDuration(5)).toBeUndefined();
  });
});

describe("gemini errorBody", () => {
  test("google.rpc.Status shape with the HTTP status as code and the Gemini status name", () => {
    expect(gemini.errorBody(hubError("rate_limit", "Slow down.", { retryAfterSeconds: 30 }))).toEqual({
      error: {
        code: 429,
        message: "Slow down.",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "30s" }],
      },
    });
    const names: Array<[Parameters<typeof hubError>[0], string]> = [
      ["invalid_request", "INVALID_ARGUMENT"],
      ["context_length_exceeded", "INVALID_ARGUMENT"],
      ["authentication", "UNAUTHENTICATED"],
      ["permission", "PERMISSION_DENIED"],
      ["model_not_found", "NOT_FOUND"],
      ["quota_exhausted", "RESOURCE_EXHAUSTED"],
      ["overloaded", "UNAVAILABLE"],
      ["timeout", "DEADLINE_EXCEEDED"],
      ["api_error", "INTERNAL"],
    ];
    for (const [kind, status] of names) {
      const err = hubError(kind, "m");
      expect(gemini.errorBody(err)).toEqual({ error: { code: kind === "overloaded" ? 503 : err.status, message: "m", status } });
    }
    // Anthropic's 529, a status Gemini never uses, is written as Gemini's 503, in-band as before a stream
    expect(gemini.errorBody(hubError("overloaded", "busy", { status: 529 }))).toEqual({ error: { code: 503, message: "busy", status: "UNAVAILABLE" } });
    // a gateway error of 503 or 504 is named as Google names those statuses (it read INTERNAL, Google's 500)
    expect((gemini.errorBody(hubError("api_error", "m", { status: 503 })) as { error: { status: string } }).error.status).toBe("UNAVAILABLE");
    expect((gemini.errorBody(hubError("api_error", "m", { status: 504 })) as { error: { status: string } }).error.status).toBe("DEADLINE_EXCEEDED");
    expect((gemini.errorBody(hubError("api_error", "m", { status: 502 })) as { error: { status: string } }).error.status).toBe("INTERNAL");
    // only an operator can end it: Google's 400 FAILED_PRECONDITION, which Gemini CLI does not retry
    expect(gemini.errorBody(hubError("api_error", "m", { status: 503, operatorOnly: true }))).toEqual({ error: { code: 400, message: "m", status: "FAILED_PRECONDITION" } });
  });

  test("parseError reads back what errorBody writes", () => {
    const err = hubError("overloaded", "busy", { status: 503, retryAfterSeconds: 7 });
    const back = gemini.parseError(503, JSON.stringify(gemini.errorBody(err)), none);
    expect(back).toMatchObject({ kind: "overloaded", status: 503, message: "busy", retryAfterSeconds: 7 });
  });
});

describe("an upstream's unknown model, to a client of an OpenAI format (REFERENCE §5.2)", () => {
  test("a Gemini 404 NOT_FOUND naming the model, and an Anthropic not_found_error: code model_not_found in a Chat and a Responses body, not NOT_FOUND / not_found_error", () => {
    const fromGemini = gemini.parseError(404, body({ code: 404, message: "models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.", status: "NOT_FOUND" }), none);
    const fromAnthropic = anthropic.parseError(404, JSON.stringify({ type: "error", error: { type: "not_found_error", message: "model: claude-nope" } }), none);
    const inner = (b: unknown) => (b as { error: Record<string, unknown> }).error;
    for (const err of [fromGemini, fromAnthropic]) {
      expect(err.kind).toBe("model_not_found");
      expect(inner(openaiChat.errorBody(err))).toMatchObject({ type: "invalid_request_error", code: "model_not_found", message: err.message });
      expect(inner(openaiResponses.errorBody(err))).toMatchObject({ type: "invalid_request_error", code: "model_not_found", message: err.message });
    }
    // other kinds keep the upstream's own code (an OpenAI client reads OpenAI's codes through)
    expect(inner(openaiChat.errorBody(hubError("invalid_request", "m", { code: "unsupported_value" }))).code).toBe("unsupported_value");
  });
});

describe("a Gemini error's Google status, to a client of an OpenAI format (REFERENCE §5.2)", () => {
  const inner = (b: unknown) => (b as { error: Record<string, unknown> }).error;
  const perMinute = [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "GenerateRequestsPerMinutePerProjectPerModel" }] }];
  const perDay = [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel" }] }];

  test("a 429 RESOURCE_EXHAUSTED reads rate_limit_exceeded (a per-minute quota) or insufficient_quota (a per-day one), never RESOURCE_EXHAUSTED", () => {
    const plain = gemini.parseError(429, '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}', none);
    expect(inner(openaiChat.errorBody(plain))).toEqual({ message: "Resource has been exhausted (e.g. check quota).", type: "rate_limit_error", param: null, code: "rate_limit_exceeded" });
    expect(inner(openaiResponses.errorBody(plain))).toEqual({ message: "Resource has been exhausted (e.g. check quota).", type: "rate_limit_exceeded", param: null, code: "rate_limit_exceeded" });
    const minute = gemini.parseError(429, body({ code: 429, message: "quota", status: "RESOURCE_EXHAUSTED", details: perMinute }), none);
    expect(inner(openaiChat.errorBody(minute)).code).toBe("rate_limit_exceeded");
    const day = gemini.parseError(429, body({ code: 429, message: "quota", status: "RESOURCE_EXHAUSTED", details: perDay }), none);
    expect(inner(openaiChat.errorBody(day))).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
    expect(inner(openaiResponses.errorBody(day))).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
  });

  test("the other statuses and ErrorInfo reasons: the kind's OpenAI code (invalid_api_key, context_length_exceeded) or null, never the Google word", () => {
    const badKey = gemini.parseError(400, body({ code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }] }), none);
    expect(inner(openaiChat.errorBody(badKey))).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    expect(inner(openaiResponses.errorBody(badKey))).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    const long = gemini.parseError(400, body({ code: 400, message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" }), none);
    expect(inner(openaiChat.errorBody(long))).toMatchObject({ type: "invalid_request_error", code: "context_length_exceeded" });
    for (const [status, word] of [[400, "INVALID_ARGUMENT"], [403, "PERMISSION_DENIED"], [500, "INTERNAL"], [503, "UNAVAILABLE"], [504, "DEADLINE_EXCEEDED"]] as const) {
      const err = gemini.parseError(status, body({ code: status, message: "m", status: word }), none);
      expect(err.code).toBe(word); // a Gemini client still gets Google's word (errorBody's status)
      for (const b of [openaiChat.errorBody(err), openaiResponses.errorBody(err)]) expect(String(inner(b).code)).not.toBe(word);
    }
    const unavailable = gemini.parseError(503, body({ code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" }), none);
    expect(inner(openaiChat.errorBody(unavailable))).toMatchObject({ type: "server_error", code: "overloaded" });
    expect(inner(openaiResponses.errorBody(unavailable))).toMatchObject({ type: "server_error", code: null });
    // an OpenAI-compatible server's own code and the gateway's still pass through
    expect(inner(openaiChat.errorBody(hubError("rate_limit", "m", { code: "key_rate_limit_exceeded" }))).code).toBe("key_rate_limit_exceeded");
  });
});
