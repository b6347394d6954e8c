/**
 * End to end through the real gateway with the official SDKs, streaming and non-streaming, to the fake
 * upstream: native pairs and translated pairs. The fake is strict (test/support/strict-upstream.ts):
 * every body the gateway sends is one the provider's API takes, checked after each test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(undefined, { fakeOptions: { strict: true } });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(() => {
  const refused = gw.fake.violations.splice(0);
  expect(refused).toEqual([]);
});

const anthropic = () => new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1`, maxRetries: 0 });
const FAKE_TEXT = "Hello from the fake upstream.";

describe("native pairs", () => {
  test("anthropic → anthropic streaming: the SDK's finalMessage has the fake's text and usage", async () => {
    const stream = anthropic().messages.stream({ model: "anth/claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    const msg = await stream.finalMessage();
    expect(msg.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe(FAKE_TEXT);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.output_tokens).toBe(7);
    const seen = gw.fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/messages");
    expect(seen.body.model).toBe("claude-test");
    expect(seen.headers["x-api-key"]).toBe("sk-fake-upstream-secret");
  });

  test("anthropic → anthropic non-streaming", async () => {
    const msg = await anthropic().messages.create({ model: "anth/claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(msg.content[0]).toMatchObject({ type: "text", text: FAKE_TEXT });
  });

  test("chat → openai streaming with usage requested and not requested", async () => {
    const s1 = await openai().chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    let usageChunks = 0;
    for await (const c of s1) {
      text += c.choices[0]?.delta?.content ?? "";
      if (c.usage) usageChunks++;
    }
    expect(text).toBe(FAKE_TEXT);
    expect(usageChunks).toBe(0);
    expect(gw.fake.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });

    const s2 = await openai().chat.completions.create({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
    let usage;
    for await (const c of s2) if (c.usage) usage = c.usage;
    expect(usage?.completion_tokens).toBe(7);
  });

  test("responses → openai-responses streaming", async () => {
    const stream = openai().responses.stream({ model: "resp/gpt-test", input: "hi" });
    const r = await stream.finalResponse();
    expect(r.output_text).toBe(FAKE_TEXT);
    expect(r.status).toBe("completed");
  });
});

describe("translated pairs", () => {
  test("anthropic client → openai-compatible provider, streaming", async () => {
    const msg = await anthropic().messages.stream({ model: "chat/glm-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(msg.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe(FAKE_TEXT);
    expect(msg.stop_reason).toBe("end_turn");
    expect(msg.usage.output_tokens).toBe(7);
    expect(gw.fake.requests.at(-1)!.path).toBe("/v1/chat/completions");
  });

  test("chat client → anthropic provider, non-streaming", async () => {
    const c = await openai().chat.completions.create({ model: "anth/claude-test", messages: [{ role: "user", content: "hi" }] });
    expect(c.choices[0].message.content).toBe(FAKE_TEXT);
    expect(c.choices[0].finish_reason).toBe("stop");
  });

  test("responses client → gemini provider, streaming", async () => {
    const r = await openai().responses.stream({ model: "gem/gemini-test", input: "hi" }).finalResponse();
    expect(r.output_text).toBe(FAKE_TEXT);
    expect(gw.fake.requests.at(-1)!.path).toBe("/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
  });
});

describe("headers and errors", () => {
  test("every answer carries X-Request-Id and X-Switchyard-Route-Id", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "oai/x", messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("x-switchyard-route-id")).toMatch(/^sy_/);
  });

  test("unknown provider prefix → 404 in the client's format", async () => {
    const res = await fetch(`${gw.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "nope/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(404);
    const body = (await res.json()) as any;
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
  });

  test("unknown path → JSON 404 in OpenAI shape", async () => {
    const res = await fetch(`${gw.url}/v2/whatever`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(((await res.json()) as any).error.message).toContain("/v2/whatever");
  });
});
