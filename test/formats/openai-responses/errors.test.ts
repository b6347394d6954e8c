import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { recordedBytes } from "../../support/fixtures.ts";
import { FormatError, hubError, type ErrorKind } from "../../../formats/hub.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

describe("parseError (provider HTTP errors)", () => {
  test("recorded 429 insufficient_quota body → quota_exhausted with the upstream message", async () => {
    const body = new TextDecoder().decode(await recordedBytes("openai-responses/error-insufficient-quota.json"));
    const err = openaiResponses.parseError(429, body, new Headers());
    expect(err.kind).toBe("quota_exhausted");
    expect(err.status).toBe(429);
    expect(err.code).toBe("insufficient_quota");
    expect(err.message).toBe(JSON.parse(body).error.message);
  });

  test("code, then type, then status decide the kind; Retry-After and 'try again in' become retryAfterSeconds", () => {
    const h = new Headers({ "retry-after": "7" });
    const rl = openaiResponses.parseError(429, JSON.stringify({ error: { message: "Rate limit reached. Please try again in 20ms.", type: "requests", code: "rate_limit_exceeded" } }), new Headers());
    expect(rl).toMatchObject({ kind: "rate_limit", retryAfterSeconds: 0.02 });
    expect(openaiResponses.parseError(429, JSON.stringify({ error: { message: "x", code: "rate_limit_exceeded" } }), h).retryAfterSeconds).toBe(7);
    expect(openaiResponses.parseError(400, JSON.stringify({ error: { message: "too long", type: "invalid_request_error", code: "context_length_exceeded", param: "input" } }), new Headers())).toMatchObject({
      kind: "context_length_exceeded",
      status: 400,
      param: "input",
    });
    expect(openaiResponses.parseError(404, JSON.stringify({ error: { message: "no", type: "invalid_request_error", code: "model_not_found" } }), new Headers()).kind).toBe("model_not_found");
    expect(openaiResponses.parseError(401, JSON.stringify({ error: { message: "bad key", type: "invalid_request_error", code: "invalid_api_key" } }), new Headers()).kind).toBe("authentication");
    // An HTML page (a proxy's) is not the client's message; other text is, cut to 500 characters.
    expect(openaiResponses.parseError(503, "<html>upstream down</html>", new Headers())).toMatchObject({ kind: "overloaded", status: 503, message: "Upstream returned HTTP 503." });
    expect(openaiResponses.parseError(503, "upstream down", new Headers())).toMatchObject({ kind: "overloaded", status: 503, message: "upstream down" });
    expect(openaiResponses.parseError(500, "", new Headers())).toMatchObject({ kind: "api_error", status: 500, message: "Upstream returned HTTP 500." });
    // Responses-compatible servers without OpenAI codes: the wording decides
    expect(openaiResponses.parseError(400, JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens" } }), new Headers()).kind).toBe("context_length_exceeded");
    expect(openaiResponses.parseError(429, JSON.stringify({ message: "You exceeded your current quota" }), new Headers()).kind).toBe("quota_exhausted");
    expect(openaiResponses.parseError(400, JSON.stringify({ error: { message: "Unknown parameter: 'max_tokens'.", type: "invalid_request_error", code: "unknown_parameter" } }), new Headers()).kind).toBe("invalid_request");
  });
});

describe("errorBody (client HTTP errors)", () => {
  const cases: Array<[ErrorKind, number, string]> = [
    ["invalid_request", 400, "BadRequestError"],
    ["authentication", 401, "AuthenticationError"],
    ["permission", 403, "PermissionDeniedError"],
    ["model_not_found", 404, "NotFoundError"],
    ["rate_limit", 429, "RateLimitError"],
    ["quota_exhausted", 429, "RateLimitError"],
    ["api_error", 500, "InternalServerError"],
  ];
  for (const [kind, status, sdkClass] of cases) {
    test(`${kind} → OpenAI envelope the SDK raises as ${sdkClass}`, async () => {
      const err = hubError(kind, `msg for ${kind}`, kind === "invalid_request" ? { param: "input" } : {});
      const body = openaiResponses.errorBody(err) as any;
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error.message).toBe(`msg for ${kind}`);
      expect(typeof body.error.type).toBe("string");
      const client = new OpenAI({
        apiKey: "k",
        baseURL: "http://127.0.0.1:1",
        maxRetries: 0,
        fetch: async () => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } }),
      });
      let thrown: any;
      try {
        await client.responses.create({ model: "m", input: "x" });
      } catch (e) {
        thrown = e;
      }
      expect(thrown?.constructor?.name).toBe(sdkClass);
      expect(thrown.status).toBe(status);
      expect(thrown.error?.message ?? thrown.message).toContain(`msg for ${kind}`);
      if (kind === "invalid_request") expect(thrown.param).toBe("input");
      if (kind === "quota_exhausted") expect(thrown.code).toBe("insufficient_quota");
    });
  }
});

describe("decodeResponse (non-streamed provider bodies)", () => {
  test("a failed Response object throws its mapped error", () => {
    let thrown: unknown;
    try {
      openaiResponses.decodeResponse({ id: "resp_1", object: "response", status: "failed", output: [], error: { code: "rate_limit_exceeded", message: "slow" } }, { family: "openai" });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FormatError);
    expect((thrown as FormatError).error).toMatchObject({ kind: "rate_limit", message: "slow", code: "rate_limit_exceeded" });
  });

  test("a body that is not a Response object throws api_error", () => {
    expect(() => openaiResponses.decodeResponse({ choices: [] }, { family: "openai" })).toThrow(FormatError);
    expect(() => openaiResponses.decodeResponse("nope", { family: "openai" })).toThrow(FormatError);
  });

  test("reasoning with encrypted state, namespaced call and incomplete status", () => {
    const r = openaiResponses.decodeResponse(
      {
        id: "resp_2",
        object: "response",
        model: "gpt-5",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        output: [
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "a" }, { type: "summary_text", text: "b" }], encrypted_content: "enc" },
          { type: "function_call", id: "fc_1", call_id: "call_1", name: "close_agent", namespace: "multi_agent_v1", arguments: "{}" },
        ],
        usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 60 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 109 },
      },
      { family: "provider:acme" },
    );
    expect(r.content).toEqual([
      { type: "thinking", text: "ab", summary: ["a", "b"], itemId: "rs_1", signature: { family: "provider:acme", value: "enc" } },
      { type: "tool_call", id: "call_1", name: "close_agent", arguments: "{}", itemId: "fc_1", namespace: "multi_agent_v1" },
    ]);
    expect(r.stopReason).toBe("max_tokens");
    expect(r.usage).toEqual({ inputTokens: 40, cacheReadTokens: 60, outputTokens: 9, reasoningTokens: 4 });
    expect(r.id).toBe("resp_2");
    expect(r.model).toBe("gpt-5");
  });
});
