/**
 * A client key's refusal that no retry helps (SPEC 9.6, 2.4; try20 D1): a used-up budget's 429 carries
 * `x-should-retry: false` next to its Retry-After (the seconds until the window resets), so the official
 * SDKs, with their default retries, raise the gateway's 429 at once: one request reaches the gateway,
 * not three (openai-node retried it twice after 0.5–8 s), and the Anthropic SDK does not sleep the
 * Retry-After (5 h here, a day for a 1d budget) before retrying. An rpm refusal, whose Retry-After is a
 * minute at most, stays retryable. Every client format and the Responses WebSocket say the same.
 *
 * Every reply of the fake upstream reports 11 input + 7 output tokens (18 counted tokens).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { refusal } from "../support/sdk-refusal.ts";

const SPENT = "sy-test-noretry-spent-00000001";
const RPM = "sy-test-noretry-rpm-000000002";
const YAML = `${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: spent, key: ${SPENT}, limits: { budgets: [{ window: 5h, tokens: 10 }] } }
  - { name: rpm, key: ${RPM}, limits: { rpm: 1 } }
`;
const SPENT_MESSAGE = /^Client key "spent" has used its 5h budget of 10 tokens \(18 tokens used\); the window resets in \S+ \S+ \(at \S+Z\)\.$/;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
  // One request spends the budget (18 of 10 tokens); every later one is refused.
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${SPENT}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
});
afterAll(async () => {
  await gw?.stop();
});

/** A fetch for an SDK that counts the requests it sends to the gateway. */
function countingFetch(): { fetch: typeof fetch; sent: () => number } {
  let n = 0;
  const f = ((input: any, init?: any) => {
    n++;
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: f, sent: () => n };
}

describe("a used-up budget, through the SDKs with their default retries", () => {
  test("Anthropic SDK: RateLimitError with the gateway's message; one request sent, no retry after the Retry-After", async () => {
    const c = countingFetch();
    const client = new Anthropic({ apiKey: SPENT, baseURL: gw.url, fetch: c.fetch });
    const e = await refusal(client.messages.create({ model: "anth/claude-test", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }));
    expect(e).toBeInstanceOf(Anthropic.RateLimitError);
    expect(e.error.error.message).toMatch(SPENT_MESSAGE);
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThan(60);
    expect(c.sent()).toBe(1);
  });

  test("OpenAI SDK, Chat Completions and Responses: RateLimitError with the gateway's message; one request each, not three", async () => {
    const c = countingFetch();
    const client = new OpenAI({ apiKey: SPENT, baseURL: `${gw.url}/v1`, fetch: c.fetch });
    const chat = await refusal(client.chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }));
    expect(chat).toBeInstanceOf(OpenAI.RateLimitError);
    expect(chat.error).toMatchObject({ code: "key_budget_exceeded" });
    expect(chat.error.message).toMatch(SPENT_MESSAGE);
    expect(c.sent()).toBe(1);
    const responses = await refusal(client.responses.create({ model: "resp/gpt-test", input: "hi" }));
    expect(responses).toBeInstanceOf(OpenAI.RateLimitError);
    expect(responses.error.message).toMatch(SPENT_MESSAGE);
    expect(c.sent()).toBe(2);
  });

  test("Gemini: the 429 says x-should-retry: false next to its Retry-After", async () => {
    const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-test:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": SPENT, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    const body = (await res.json()) as any;
    expect([res.status, res.headers.get("x-should-retry"), body.error.status]).toEqual([429, "false", "RESOURCE_EXHAUSTED"]);
    expect(body.error.message).toMatch(SPENT_MESSAGE);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(60);
  });

  test("Responses WebSocket: the error frame carries x-should-retry: false with its retry-after", async () => {
    const ws = await connect(gw.url, { authorization: `Bearer ${SPENT}` });
    try {
      ws.send({ type: "response.create", model: "resp/gpt-test", input: "hi" });
      const frame = await ws.next();
      expect(frame).toMatchObject({ type: "error", status: 429, headers: { "x-should-retry": "false" } });
      expect(frame.error.message).toMatch(SPENT_MESSAGE);
      expect(Number(frame.headers["retry-after"])).toBeGreaterThan(60);
    } finally {
      ws.ws.close();
    }
  });
});

test("an rpm refusal (Retry-After a minute at most) stays retryable: no x-should-retry", async () => {
  const send = () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${RPM}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
    });
  expect((await send()).status).toBe(200);
  const res = await send();
  const body = (await res.json()) as any;
  expect([res.status, body.error.code, res.headers.get("x-should-retry")]).toEqual([429, "key_rate_limit_exceeded", null]);
  expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(60);
});
