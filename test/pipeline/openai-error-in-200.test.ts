/**
 * Found by a provider tryout (session 45; fixed that session): an OpenAI-family server (kind `openai`,
 * `openai-compatible`, `openai-responses`) that answers HTTP 200 with an error body
 * (`{"error":{"message":…,"type":"invalid_request_error",…}}`, as some OpenAI-compatible servers and
 * proxies do) has its error thrown away: the client gets 502 "The upstream reply is not a Chat
 * Completions body (no choices[0].message)." (Responses: "…is not an OpenAI Responses object."), the
 * request is tried 4 times on the same account (same-account retries of a 5xx), and the account cools
 * down for the model. The same body from an `anthropic` provider (`{"type":"error",…}`) or a `gemini`
 * one (`{"error":{code,status,…}}`) is read as the error it is (400, the upstream's message, one call):
 * formats/anthropic-messages/response.ts checks for it, formats/openai-chat/response.ts
 * `decodeResponse` (and the Responses decoder) do not.
 *
 * Expected: the upstream's error, classified as if it had come with its own status (SPEC 3 R-8 says so
 * of a 200 that opens with an error event; SPEC 6.3: a rejected request is not retried on the account):
 * the client sees the upstream's message, and the upstream is called once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"], ["chat", "openai-compatible"], ["resp", "openai-responses"], ["anth", "anthropic"]]));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

const MESSAGE = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
const ERROR_BODY = { error: { message: MESSAGE, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } };

async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) };
}

describe("HTTP 200 with an OpenAI error body", () => {
  for (const [provider, path, body] of [
    ["oai", "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }],
    ["chat", "/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }],
    ["resp", "/v1/responses", { input: "hi" }],
  ] as const) {
    test(`${provider} (${path}): the client gets the upstream's error, and the upstream is called once`, async () => {
      gw.fake.reset();
      gw.fake.handle(() => ({ status: 200, json: ERROR_BODY }));
      const r = await post(path, { model: `${provider}/gpt-test`, ...body });
      expect([r.status, r.json.error?.message]).toEqual([400, MESSAGE]);
      expect(gw.fake.requests.length).toBe(1);
    });
  }

  test("a streamed request answered 200 with the error as JSON: the same 400, one call", async () => {
    gw.fake.reset();
    gw.fake.handle(() => ({ status: 200, json: ERROR_BODY }));
    const r = await post("/v1/chat/completions", { model: "chat/gpt-test-s", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect([r.status, r.json.error?.message]).toEqual([400, MESSAGE]);
    expect(gw.fake.requests.length).toBe(1);
  });

  test("the same from an anthropic provider (its own error shape) is read as the error it is (passes today)", async () => {
    gw.fake.reset();
    gw.fake.handle(() => ({ status: 200, json: { type: "error", error: { type: "invalid_request_error", message: MESSAGE } } }));
    const r = await post("/v1/chat/completions", { model: "anth/claude-test", messages: [{ role: "user", content: "hi" }] });
    expect([r.status, r.json.error?.message]).toEqual([400, MESSAGE]);
    expect(gw.fake.requests.length).toBe(1);
  });
});
