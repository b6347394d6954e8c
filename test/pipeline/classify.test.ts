/**
 * The classification table (SPEC 6.3), row by row, with the bodies and headers real providers send.
 */
import { describe, expect, test } from "bun:test";
import { classify, resetTimeOf, type Classification, type FailureFacts, misdirected404Error, redirectError } from "../../pipeline/classify.ts";
import { codecFor } from "../../formats/index.ts";
import { parseGoDuration } from "../../formats/retry-after.ts";
import { hubError } from "../../formats/hub.ts";
import { EMPTY_REPLY_ERROR } from "../../formats/openai-chat/decoder.ts";
import { cutToolCallError } from "../../formats/normalize.ts";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const f = (x: Partial<FailureFacts>): FailureFacts => ({ now: NOW, ...x });
const h = (o: Record<string, string>) => new Headers(o);

describe("rows", () => {
  test("429 with Retry-After → cooldown until then (model scope), next account", () => {
    const c = classify(f({ status: 429, headers: h({ "retry-after": "30" }), bodyText: '{"error":{"type":"rate_limit_error"}}' }));
    expect(c).toEqual({
      row: "rate_limit_with_reset",
      account: { type: "cooldown_until", scope: "model", until: NOW + 30_000, reason: "429 with a reset time" },
      loop: "next_account",
      retryAfterSeconds: 30,
    });
  });

  test("429 reset time in Anthropic's reset headers and capped at 6 h", () => {
    const c = classify(f({ status: 429, headers: h({ "anthropic-ratelimit-tokens-reset": "2026-12-02T12:00:00Z" }) }));
    expect(c.row).toBe("rate_limit_with_reset");
    expect(c.account).toMatchObject({ type: "cooldown_until", until: NOW + 6 * 3600_000 }); // SPEC 6.3: capped at 6 h
  });

  test("429 reset time in the body (Gemini RetryInfo parsed by the format; OpenAI 'try again in')", () => {
    const gem = classify(f({ status: 429, error: hubError("rate_limit", "Resource exhausted", { retryAfterSeconds: 17 }) }));
    expect(gem.account).toMatchObject({ type: "cooldown_until", until: NOW + 17_000 });
    const oai = classify(f({ status: 429, bodyText: "Rate limit reached for gpt-x. Please try again in 1.5s." }));
    expect(oai.account).toMatchObject({ type: "cooldown_until", until: NOW + 1500 });
  });

  test("429 worded as a rate limit with healthy quota → 90 s", () => {
    const c = classify(f({ status: 429, bodyText: "rate limit exceeded", quotaHealthy: true }));
    expect(c.row).toBe("rate_limit_per_minute");
    expect(c.account).toMatchObject({ type: "cooldown_for", scope: "model", ms: 90_000 });
    expect(c.loop).toBe("next_account");
  });

  test("other 429, overloaded, 529 → backoff, next account; in-band overloaded → same account first", () => {
    expect(classify(f({ status: 429, bodyText: "slow down" }))).toMatchObject({ row: "rate_limit_backoff", account: { type: "backoff" }, loop: "next_account" });
    expect(classify(f({ status: 529, bodyText: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }))).toMatchObject({
      row: "rate_limit_backoff",
      loop: "next_account",
    });
    expect(classify(f({ status: 529, inBand: true, error: hubError("overloaded", "Overloaded") }))).toMatchObject({ row: "rate_limit_backoff", loop: "retry_same" });
    // A 429 with low quota is not the per-minute rule.
    expect(classify(f({ status: 429, bodyText: "rate limit exceeded", quotaHealthy: false })).row).toBe("rate_limit_backoff");
  });

  test("the status decides first: a 503 read as overloaded by any provider's error reader is the same-account row (SPEC 6.2 loop 1)", () => {
    const bodies: Array<[Parameters<typeof codecFor>[0], string]> = [
      ["openai-chat", '{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","code":null}}'],
      ["openai-responses", '{"error":{"message":"Service unavailable","type":"server_error"}}'],
      ["anthropic-messages", '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'],
      ["gemini", '{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}'],
    ];
    for (const [format, body] of bodies) {
      const error = codecFor(format).parseError(503, body, new Headers(), NOW);
      expect([format, classify(f({ status: 503, bodyText: body, error }))]).toMatchObject([format, { row: "server_error", loop: "retry_same", account: { type: "cooldown_for", scope: "model", ms: 30_000 } }]);
    }
    // The backoff row needs a 429, a 529, or an in-band notice.
    const overloaded = codecFor("anthropic-messages").parseError(529, bodies[2][1], new Headers(), NOW);
    expect(classify(f({ status: 529, error: overloaded })).row).toBe("rate_limit_backoff");
    expect(classify(f({ status: 429, bodyText: "The engine is currently overloaded" })).row).toBe("rate_limit_backoff");
  });

  test("SPEC 6.2: a 503 asking to wait up to a minute stays on the same account; one second more moves on", () => {
    expect(classify(f({ status: 503, headers: h({ "retry-after": "60" }) })).loop).toBe("retry_same");
    expect(classify(f({ status: 503, headers: h({ "retry-after": "61" }) })).loop).toBe("next_account");
  });

  test("quota exhausted / spend cap / ban → whole-account lock", () => {
    for (const body of [
      '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}',
      '{"type":"error","error":{"type":"rate_limit_error","message":"x","details":{"error_code":"enforced_spend_limit_reached"}}}',
      '{"error":{"message":"Your account is suspended"}}',
    ]) {
      const c = classify(f({ status: 429, bodyText: body }));
      expect(c.row).toBe("quota_exhausted");
      expect(c.account).toMatchObject({ type: "lock", until: undefined });
      expect(c.loop).toBe("next_account");
    }
    // A named reset time bounds the lock.
    const c = classify(f({ status: 429, headers: h({ "retry-after": "3600" }), bodyText: "insufficient_quota" }));
    expect(c.account).toMatchObject({ type: "lock", until: NOW + 3600_000 });
  });

  test("401 and credential 403 → credential; model 403 and 404 → pairing removed, next target", () => {
    expect(classify(f({ status: 401 }))).toMatchObject({ row: "credential", loop: "next_account" });
    expect(classify(f({ status: 403, bodyText: "OAuth token has expired" }))).toMatchObject({ row: "credential" });
    expect(classify(f({ status: 403, bodyText: "You do not have access to the model gpt-x" }))).toMatchObject({ row: "model_unavailable", loop: "next_target", account: { type: "remove_pairing" } });
    expect(classify(f({ status: 404, error: hubError("model_not_found", "The model gpt-x does not exist") }))).toMatchObject({ row: "model_unavailable", loop: "next_target" });
  });

  test("a 404 that is not the provider's error JSON (HTML page, no body, plain text) → the server row: cooldown for the model, next account, no removal", () => {
    const server = { row: "server_error", account: { type: "cooldown_for", scope: "model", ms: 30_000, reason: "upstream 404 that is not the provider's error (check providers[].base_url)" }, loop: "next_account" } satisfies Classification;
    // review19 R1: a page whose words say "does not exist", and FastAPI's answer to a path it has no
    // route for (vLLM, LiteLLM), are a wrong URL too.
    const pages = ["<h1>404 Not Found</h1>", "<html><body>The requested URL /nope/v1/messages does not exist on this server.</body></html>"];
    for (const bodyText of [...pages, "", "Cannot POST /nope/v1/messages", "{not json", '{"detail":"Not Found"}', '{"message":"Not Found"}']) {
      const error = codecFor("anthropic-messages").parseError(404, bodyText, h({}), NOW);
      expect(classify(f({ status: 404, bodyText, error }))).toEqual(server);
    }
    // The provider's own 404s keep the model row: a JSON error, or plain text naming the model.
    const json = '{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}';
    expect(classify(f({ status: 404, bodyText: json, error: codecFor("anthropic-messages").parseError(404, json, h({}), NOW) }))).toMatchObject({ row: "model_unavailable", account: { type: "remove_pairing" } });
    expect(classify(f({ status: 404, bodyText: "model not found" }))).toMatchObject({ row: "model_unavailable" });
    // vLLM's answer for a model it does not serve names it: the model row
    const vllm = '{"object":"error","message":"The model `llama-x` does not exist.","type":"NotFoundError","param":null,"code":404}';
    expect(classify(f({ status: 404, bodyText: vllm, error: codecFor("openai-chat").parseError(404, vllm, h({}), NOW) }))).toMatchObject({ row: "model_unavailable" });
  });

  test("a request-policy 403 is the request's fault: no account effect, next target", () => {
    expect(classify(f({ status: 403, bodyText: "Request not allowed by policy" }))).toEqual({ row: "client_error", account: { type: "none" }, loop: "next_target" });
  });

  test("402 → lock account", () => {
    expect(classify(f({ status: 402 }))).toMatchObject({ row: "payment_required", account: { type: "lock" }, loop: "next_account" });
  });

  test("prompt/request too large → returned at once", () => {
    for (const [status, body] of [
      [400, "prompt is too long: 210000 tokens > 200000 maximum"],
      [400, '{"error":{"code":"context_length_exceeded","message":"This model\'s maximum context length is 128000 tokens"}}'],
      [413, '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}'],
      [422, "input is too long for the model"],
    ] as const) {
      expect(classify(f({ status, bodyText: body }))).toEqual({ row: "request_too_large", account: { type: "none" }, loop: "return" });
    }
  });

  test("a 429 saying the request alone exceeds the per-minute limit → no cooldown, no Retry-After, the next account (the limit is this account's tier and model, review16 R1); a real TPM limit still cools down", () => {
    const tooLarge = "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364.";
    const returned: Classification = { row: "too_large_for_window", account: { type: "none" }, loop: "next_account" };
    expect(classify(f({ status: 429, bodyText: JSON.stringify({ error: { message: tooLarge, type: "tokens", code: "rate_limit_exceeded" } }), quotaHealthy: true }))).toEqual(returned);
    // The same from a Responses stream's `response.failed` (an in-band rate-limit notice, read by the format).
    expect(classify(f({ status: 429, inBand: true, error: hubError("rate_limit", tooLarge, { code: "rate_limit_exceeded" }) }))).toEqual(returned);
    // Requested above the limit without the wording.
    expect(classify(f({ status: 429, bodyText: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 45000." }))).toEqual(returned);
    // A genuine per-minute limit: the request fits the limit, the window is full.
    const real = classify(f({ status: 429, bodyText: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.", quotaHealthy: true }));
    expect(real).toMatchObject({ row: "rate_limit_per_minute", account: { type: "cooldown_for", scope: "model", ms: 90_000 }, retryAfterSeconds: 90 });
    // Thousands separators are read as such (review16 R3): a big limit's genuine 429 is not "too large" …
    expect(classify(f({ status: 429, bodyText: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 1,000,000, Used 999,000, Requested 2,000.", quotaHealthy: true })).row).toBe("rate_limit_per_minute");
    // … and a request over it is
    expect(classify(f({ status: 429, bodyText: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30,000, Requested 35,364." }))).toEqual(returned);
    // free text that is no "Limit N, Requested M" list is not read as one
    expect(classify(f({ status: 429, bodyText: "limit 5 requests per minute; requested 6 in window", quotaHealthy: true })).row).not.toBe("too_large_for_window");
  });

  test("no capacity available → returned at once", () => {
    expect(classify(f({ status: 503, bodyText: "No capacity available for model x" })).loop).toBe("return");
  });

  test("other 4xx → no account effect, next target", () => {
    expect(classify(f({ status: 400, bodyText: "Unsupported parameter: 'top_k'" }))).toEqual({ row: "client_error", account: { type: "none" }, loop: "next_target" });
    expect(classify(f({ status: 422, bodyText: "invalid tool schema" })).row).toBe("client_error");
  });

  test("5xx: 502/503/504 retried on the same account, 500 not; short cooldown after, for that model only (SPEC 6.2 loop 2)", () => {
    for (const s of [502, 503, 504]) expect(classify(f({ status: s }))).toMatchObject({ row: "server_error", loop: "retry_same", account: { type: "cooldown_for", scope: "model", ms: 30_000 } });
    expect(classify(f({ status: 500 }))).toMatchObject({ row: "server_error", loop: "next_account", account: { scope: "model" } });
    // A stream that broke before the commit point (an event that is not JSON, an in-band 5xx error) is the same row.
    const malformed = hubError("api_error", "The upstream sent an event that is not JSON.", { status: 502, code: "upstream_malformed" });
    expect(classify(f({ status: 502, error: malformed, inBand: true }))).toMatchObject({ row: "server_error", account: { type: "cooldown_for", scope: "model", ms: 30_000 } });
    // A provider asking to wait more than a minute ends same-account retries.
    expect(classify(f({ status: 503, headers: h({ "retry-after": "120" }) })).loop).toBe("next_account");
  });

  test("a 5xx naming a wait longer than the 30 s cooldown cools the model until then, capped at 6 h; a shorter one keeps the 30 s", () => {
    expect(classify(f({ status: 503, headers: h({ "retry-after": "120" }) })).account).toEqual({ type: "cooldown_until", scope: "model", until: NOW + 120_000, reason: "upstream 503" });
    expect(classify(f({ status: 502, headers: h({ "retry-after": "86400" }) })).account).toEqual({ type: "cooldown_until", scope: "model", until: NOW + 6 * 3600_000, reason: "upstream 502" });
    expect(classify(f({ status: 503, headers: h({ "retry-after": "5" }) })).account).toEqual({ type: "cooldown_for", scope: "model", ms: 30_000, reason: "upstream 503" });
  });

  test("the gateway's own failure on a reply (a driver that threw before the commit point) → no account effect, returned at once, whatever the status", () => {
    for (const status of [200, 500, 502]) expect(classify(f({ gateway: true, status }))).toEqual({ row: "gateway_error", account: { type: "none" }, loop: "return" });
  });

  test("a call the gateway's own shutdown cut (the grace period ended while it waited) → no account effect, returned at once, not a transport failure", () => {
    const stopping = hubError("overloaded", "The gateway is shutting down.", { status: 503, code: "gateway_stopping" });
    expect(classify(f({ transport: "aborted", stopping: true, error: stopping }))).toEqual({ row: "gateway_stopping", account: { type: "none" }, loop: "return" });
    // An upstream (another switchyard) answering its own 503 gateway_stopping is an upstream failure: fallback, not this gateway's stop.
    expect(classify(f({ status: 503, error: stopping }))).toMatchObject({ row: "server_error", loop: "retry_same", account: { type: "cooldown_for", scope: "model" } });
  });

  test("a streamed reply the provider ended with nothing in it (Chat choices: [] chunks only) → the empty reply row: no account effect, next target (not a 502's same-account retry)", () => {
    expect(classify(f({ status: 502, error: EMPTY_REPLY_ERROR, inBand: true }))).toEqual({ row: "empty_reply", account: { type: "none" }, loop: "next_target" });
    // A reply whose token limit cut its tool call, for a client given calls only whole (Gemini, Responses): nothing usable either.
    expect(classify(f({ status: 502, error: cutToolCallError("get_weather", "max_tokens") }))).toEqual({ row: "empty_reply", account: { type: "none" }, loop: "next_target" });
  });

  test("a 2xx the gateway cannot use (not JSON, not the format's shape, an HTML page, no body, a stream that ended before its first byte) → the empty reply row: no account effect (no count toward the circuit), next target, not a 502's same-account retry", () => {
    const unusable = hubError("api_error", "Upstream p answered HTTP 200 (Content-Type text/html) with a reply the gateway cannot use: …", { status: 502, code: "upstream_invalid_json" });
    expect(classify(f({ status: 502, error: unusable, unusable: true }))).toEqual({ row: "empty_reply", account: { type: "none" }, loop: "next_target" });
    // the same 502 without the mark (a 502 the upstream sent) is the server row
    expect(classify(f({ status: 502, error: unusable }))).toMatchObject({ row: "server_error", loop: "retry_same" });
  });

  test("a redirect (3xx, not followed) → the configuration is at fault: no account effect, no other account (they share the base_url), next target", () => {
    for (const status of [301, 302, 307, 308]) {
      const error = redirectError("p", status, "https://api.example.invalid/v1/?key=x");
      expect(classify(f({ status, error, bodyText: "" }))).toEqual({ row: "redirect", account: { type: "none" }, loop: "next_target" });
      // the client's message names the status, not the address; the operator's trace text has it, without its query
      expect([error.status, error.code, error.message.includes(`HTTP ${status}`), error.message.includes("example.invalid")]).toEqual([502, "upstream_redirect", true, false]);
      expect([error.traceMessage?.startsWith("Redirect to https://api.example.invalid/v1/ — "), error.traceMessage?.includes("key=")]).toEqual([true, false]);
    }
    expect(redirectError("p", 301, null).traceMessage).toContain("without a Location");
  });

  test("transport failures (refused, reset, header timeout) → same-account retries, short cooldown for that model", () => {
    for (const t of ["connect", "reset", "header_timeout"] as const) {
      expect(classify(f({ transport: t }))).toMatchObject({ row: "transport", loop: "retry_same", account: { type: "cooldown_for", scope: "model", ms: 30_000 } });
    }
  });
});

describe("reset times", () => {
  test("Retry-After as seconds and as an HTTP date", () => {
    expect(resetTimeOf(f({ headers: h({ "retry-after": "7" }) }))).toBe(NOW + 7000);
    expect(resetTimeOf(f({ headers: h({ "retry-after": "Mon, 30 Nov 2026 12:01:00 GMT" }) }))).toBe(NOW + 60_000);
  });

  test("OpenAI x-ratelimit-reset-* Go durations; the latest named time wins", () => {
    expect(parseGoDuration("6m0s")).toBe(360_000);
    expect(parseGoDuration("1h2m3.5s")).toBe(3_723_500);
    expect(parseGoDuration("20ms")).toBe(20);
    expect(resetTimeOf(f({ headers: h({ "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s" }) }))).toBe(NOW + 360_000);
  });

  test("Codex usage-limit bodies (resets_in_seconds / resets_at)", () => {
    expect(resetTimeOf(f({ bodyText: '{"error":{"type":"usage_limit_reached","resets_in_seconds":1200}}' }))).toBe(NOW + 1_200_000);
    expect(resetTimeOf(f({ bodyText: `{"error":{"resets_at":${Math.floor((NOW + 5000) / 1000)}}}` }))).toBe(NOW + 5000);
  });

  test("no hint → undefined", () => {
    expect(resetTimeOf(f({ headers: h({}), bodyText: "rate limited" }))).toBeUndefined();
  });
});

describe("misdirected404Error's route-trace text (review20 R1)", () => {
  test("a hosted gateway's long URL stays whole in the 300 characters the trace keeps; its query and user info never appear", () => {
    const url = "https://user:pw@gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/my-company-gateway/anthropic-wrong/v1/messages?key=secret-in-query";
    const e = misdirected404Error("anth", url, "<!DOCTYPE html><html><body>Not Found</body></html>");
    const kept = e.traceMessage!.slice(0, 300);
    expect(kept).toContain("https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/my-company-gateway/anthropic-wrong/v1/messages");
    expect(e.traceMessage).not.toContain("secret-in-query");
    expect(e.traceMessage).not.toContain("pw@");
    expect(e.message).not.toContain("cloudflare");
  });
});
