/**
 * Non-streamed Chat bodies (decodeResponse / encodeResponse) and error bodies (errorBody / parseError),
 * REFERENCE §2.2, §2.4, §5.2.
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { FormatError, type HubResponse } from "../../../formats/hub.ts";
import { FIXTURES } from "../../support/fixtures.ts";

const opts = { family: "openai" as const };
const enc = { model: "gpt-test", now: () => 1_750_000_000_000, newId: (p: string) => `${p}abc` };
const textJson = await Bun.file(`${FIXTURES}/recorded/openai-chat/text.json`).json();
const errJson = await Bun.file(`${FIXTURES}/recorded/openai-chat/error-unsupported-parameter.json`).text();

describe("decodeResponse", () => {
  test("recorded text.json: text, stop reason, usage split (uncached input), id and model", () => {
    const r = openaiChat.decodeResponse(textJson, opts);
    expect(r.content).toEqual([{ type: "text", text: textJson.choices[0].message.content }]);
    expect(r.stopReason).toBe("end_turn");
    expect(r.rawStopReason).toBe("stop");
    expect(r.usage).toEqual({ inputTokens: 16, cacheReadTokens: 0, outputTokens: 363, reasoningTokens: 0 });
    expect(r.id).toBe(textJson.id);
    expect(r.model).toBe(textJson.model);
  });

  test("reasoning, tool calls with finish stop (→ tool_use), missing id synthesised, object arguments serialised", () => {
    const r = openaiChat.decodeResponse(
      {
        id: "x1",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "", reasoning_content: "think", tool_calls: [
          { id: "call_a", type: "function", function: { name: "f", arguments: '{"a":1}' } },
          { type: "function", function: { name: "g", arguments: { b: 2 } } },
        ] } }],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 5 } },
      },
      opts,
    );
    expect(r.content[0]).toEqual({ type: "thinking", text: "think" });
    expect(r.content[1]).toEqual({ type: "tool_call", id: "call_a", name: "f", arguments: '{"a":1}' });
    expect(r.content[2]).toMatchObject({ type: "tool_call", name: "g", arguments: '{"b":2}' });
    expect((r.content[2] as { id: string }).id).toMatch(/^call_[0-9a-f]{16}$/);
    expect(r.stopReason).toBe("tool_use");
    expect(r.usage).toEqual({ inputTokens: 40, cacheReadTokens: 60, outputTokens: 20, reasoningTokens: 5 });
  });

  test("a refusal is text with stop reason refusal; no finish_reason stays null (nothing invented)", () => {
    const a = openaiChat.decodeResponse({ choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: null, refusal: "No." } }] }, opts);
    expect(a.content).toEqual([{ type: "text", text: "No.", refusal: true }]);
    expect(a.stopReason).toBe("refusal");
    const b = openaiChat.decodeResponse({ choices: [{ index: 0, message: { role: "assistant", content: "x" } }] }, opts);
    expect(b.stopReason).toBeNull();
  });

  test("a body that is not a chat completion is a FormatError", () => {
    for (const body of [null, {}, { choices: [{ index: 0 }] }, "text"]) {
      expect(() => openaiChat.decodeResponse(body, opts)).toThrow(FormatError);
    }
  });

  test("choices: [] (Azure's filtered prompt, a degenerate 200) is an empty reply: a refusal when a prompt filter result says filtered, else no stop reason", () => {
    const results = (filtered: boolean) => [{ prompt_index: 0, content_filter_results: { hate: { filtered: false }, sexual: { filtered } } }];
    const body = (filtered: boolean) => ({ id: "chatcmpl-x", model: "gpt-x", choices: [], prompt_filter_results: results(filtered), usage: { prompt_tokens: 9, completion_tokens: 0 } });
    expect(openaiChat.decodeResponse(body(true), opts)).toEqual({ id: "chatcmpl-x", model: "gpt-x", content: [], stopReason: "refusal", rawStopReason: "content_filter", usage: { inputTokens: 9, outputTokens: 0 } });
    expect(openaiChat.decodeResponse(body(false), opts)).toEqual({ id: "chatcmpl-x", model: "gpt-x", content: [], stopReason: null, usage: { inputTokens: 9, outputTokens: 0 } });
    expect(openaiChat.decodeResponse({ choices: [] }, opts)).toEqual({ content: [], stopReason: null, usage: {} });
  });
});

describe("encodeResponse", () => {
  const resp: HubResponse = {
    content: [
      { type: "thinking", text: "plan", signature: { family: "anthropic", value: "sig" } },
      { type: "text", text: "Calling." },
      { type: "tool_call", id: "toolu_1", name: "ls", arguments: "" },
    ],
    stopReason: "tool_use",
    usage: { inputTokens: 10, cacheReadTokens: 90, cacheWriteTokens: 5, outputTokens: 7, reasoningTokens: 3 },
  };

  test("message, finish_reason and usage in Chat vocabulary; no-arg call gets {}; the SDK reads it", async () => {
    const body = openaiChat.encodeResponse!(resp, enc);
    expect(body).toEqual({
      id: "chatcmpl-abc",
      object: "chat.completion",
      created: 1_750_000_000,
      model: "gpt-test",
      choices: [{ index: 0, logprobs: null, finish_reason: "tool_calls", message: {
        role: "assistant", content: "Calling.", refusal: null, reasoning_content: "plan",
        // the signed thinking again, with its signature tagged, for the client to send back (reasoning-details.ts)
        reasoning_details: [{ type: "reasoning.text", text: "plan", signature: "sy|anthropic|sig", index: 0 }],
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "ls", arguments: "{}" } }],
      } }],
      usage: { prompt_tokens: 105, completion_tokens: 7, total_tokens: 112, prompt_tokens_details: { cached_tokens: 90, cache_write_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 3 } },
    });
    expect(JSON.stringify(body)).not.toContain('"sig"'); // never untagged
    const client = new OpenAI({
      apiKey: "t",
      baseURL: "http://127.0.0.1:1",
      maxRetries: 0,
      fetch: (async () => new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } })) as unknown as typeof fetch,
    });
    const got = await client.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
    const call = got.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.arguments).toBe("{}");
    expect(got.usage?.prompt_tokens).toBe(105);
  });

  test("a Gemini-signed tool call: its signature in message.reasoning_details with the call's id and OpenRouter's format, tagged; an unsigned call has none", () => {
    const body = openaiChat.encodeResponse!(
      {
        content: [
          { type: "tool_call", id: "call_a", name: "f", arguments: "{}", signature: { family: "gemini", value: "S1" } },
          { type: "tool_call", id: "call_b", name: "f", arguments: "{}" },
        ],
        stopReason: "tool_use",
        usage: {},
      },
      enc,
    );
    expect((body as any).choices[0].message.reasoning_details).toEqual([{ type: "reasoning.encrypted", data: "sy|gemini|S1", id: "call_a", format: "google-gemini-v1", index: 0 }]);
    expect(JSON.stringify(body)).not.toContain('"S1"');
  });

  test("decode → encode of the recorded body keeps text, finish and token counts", () => {
    const body = openaiChat.encodeResponse!(openaiChat.decodeResponse(textJson, opts), enc) as any;
    expect(body.choices[0].message.content).toBe(textJson.choices[0].message.content);
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage).toEqual({
      prompt_tokens: textJson.usage.prompt_tokens,
      completion_tokens: textJson.usage.completion_tokens,
      total_tokens: textJson.usage.total_tokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test("stop reasons map by meaning", () => {
    const map = (stopReason: HubResponse["stopReason"]) => (openaiChat.encodeResponse!({ content: [{ type: "text", text: "x" }], stopReason, usage: {} }, enc) as any).choices[0].finish_reason;
    expect([map("end_turn"), map("max_tokens"), map("stop_sequence"), map("refusal"), map("context_window_exceeded"), map("pause_turn"), map(null)]).toEqual([
      "stop", "length", "stop", "content_filter", "length", "stop", null,
    ]);
  });
});

describe("errors", () => {
  test("recorded 400 unsupported_parameter: kind, code, param, status kept", () => {
    const e = openaiChat.parseError(400, errJson, new Headers());
    expect(e).toEqual({
      kind: "invalid_request",
      status: 400,
      message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      code: "unsupported_parameter",
      param: "max_tokens",
    });
    // and back out in Chat's own shape
    expect(openaiChat.errorBody(e)).toEqual(JSON.parse(errJson));
  });

  test("classification by status, type/code and message; retry waits from headers and text", () => {
    const h = (o: Record<string, string> = {}) => new Headers(o);
    const body = (o: object) => JSON.stringify(o);
    expect(openaiChat.parseError(429, body({ error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } }), h())).toMatchObject({ kind: "quota_exhausted", status: 429 });
    expect(openaiChat.parseError(429, body({ error: { message: "Rate limit reached", code: "rate_limit_exceeded" } }), h({ "retry-after": "7" }))).toMatchObject({ kind: "rate_limit", retryAfterSeconds: 7 });
    expect(openaiChat.parseError(429, body({ error: { message: "slow" } }), h({ "retry-after-ms": "1500" })).retryAfterSeconds).toBe(1.5);
    expect(openaiChat.parseError(429, body({ error: { message: "slow" } }), h({ "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s" })).retryAfterSeconds).toBe(360);
    expect(openaiChat.parseError(400, body({ error: { message: "This model's maximum context length is 8192 tokens.", code: "context_length_exceeded" } }), h())).toMatchObject({ kind: "context_length_exceeded" });
    expect(openaiChat.parseError(401, body({ error: { message: "Incorrect API key", code: "invalid_api_key" } }), h())).toMatchObject({ kind: "authentication", status: 401 });
    expect(openaiChat.parseError(404, body({ error: { message: "The model `x` does not exist", code: "model_not_found" } }), h())).toMatchObject({ kind: "model_not_found" });
    expect(openaiChat.parseError(503, "<html>upstream down</html>", h())).toEqual({ kind: "overloaded", status: 503, message: "Upstream returned HTTP 503." });
    expect(openaiChat.parseError(500, body({ detail: "boom" }), h())).toMatchObject({ kind: "api_error", message: "boom" });
    // vLLM: {"object":"error",...}
    expect(openaiChat.parseError(400, body({ object: "error", message: "max_tokens must be at least 1", type: "BadRequestError", param: null, code: 400 }), h())).toMatchObject({ kind: "invalid_request", message: "max_tokens must be at least 1" });
  });

  test("errorBody gives each kind an OpenAI type/code; a kind's own code wins", () => {
    expect(openaiChat.errorBody({ kind: "context_length_exceeded", status: 400, message: "too long" })).toEqual({ error: { message: "too long", type: "invalid_request_error", param: null, code: "context_length_exceeded" } });
    expect(openaiChat.errorBody({ kind: "api_error", status: 502, message: "x", code: "upstream_truncated" })).toEqual({ error: { message: "x", type: "server_error", param: null, code: "upstream_truncated" } });
    expect((openaiChat.errorBody({ kind: "quota_exhausted", status: 429, message: "q" }) as any).error.code).toBe("insufficient_quota");
  });
});
