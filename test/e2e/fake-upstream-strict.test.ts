/**
 * The fake upstream's strict mode (test/support/fake-upstream.ts `strict`), which the real-CLI and
 * translation e2e tests turn on: a body the provider's API would refuse gets that provider's 400
 * naming the violation and is recorded; a body it takes is answered as usual; without `strict` the
 * fake takes anything (the other tests' behaviour).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";

let fake: FakeUpstream;
let loose: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream({ strict: { exempt: (r) => r.headers["x-client-bytes"] === "1" } });
  loose = await startFakeUpstream();
});
afterAll(async () => {
  await fake.stop();
  await loose.stop();
});

const post = (f: FakeUpstream, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${f.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("strict fake upstream", () => {
  test("OpenAI Chat: an unknown member is a 400 invalid_request_error naming it, recorded", async () => {
    fake.reset();
    const res = await post(fake, "/v1/chat/completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }], max_output_tokens: 5 });
    expect(res.status).toBe(400);
    const j: any = await res.json();
    expect(j.error.type).toBe("invalid_request_error");
    expect(j.error.message).toContain("/max_output_tokens: is not a member the API takes");
    expect(fake.violations).toEqual([
      { path: "/v1/chat/completions", format: "openai-chat", model: "gpt-5", schema: "openai-chat-completions", lines: ["/max_output_tokens: is not a member the API takes"] },
    ]);
    const ok = await post(fake, "/v1/chat/completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }] });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).choices[0].message.content).toBe("Hello from the fake upstream.");
    expect(fake.violations.length).toBe(1);
  });

  test("OpenAI Responses: a prose rule (a call output without its call) is refused", async () => {
    fake.reset();
    const res = await post(fake, "/v1/responses", { model: "gpt-5", input: [{ type: "function_call_output", call_id: "c1", output: "x" }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toContain("rule output-has-call: /input/0 function_call_output c1 has no call");
  });

  test("Anthropic Messages: 400 with the Anthropic error shape; a queued reply waits for a good body", async () => {
    fake.reset();
    fake.enqueue({ json: { scripted: true } });
    const res = await post(fake, "/v1/messages", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(400);
    const j: any = await res.json();
    expect(j.type).toBe("error");
    expect(j.error.type).toBe("invalid_request_error");
    expect(j.error.message).toContain("/: must have required property 'max_tokens'");
    const ok = await post(fake, "/v1/messages", { model: "claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
    expect(await ok.json()).toEqual({ scripted: true });
  });

  test("Gemini: 400 INVALID_ARGUMENT; the model of the path governs model rules", async () => {
    fake.reset();
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } };
    const res = await post(fake, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", body);
    expect(res.status).toBe(400);
    const j: any = await res.json();
    expect(j.error.status).toBe("INVALID_ARGUMENT");
    expect(j.error.code).toBe(400);
    expect(j.error.message).toContain("rule thinking-budget-2.5-pro");
    const flash = await post(fake, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body);
    expect(flash.status).toBe(200);
    expect(fake.violations.map((v) => v.model)).toEqual(["gemini-2.5-pro"]);
  });

  test("exempt requests and non-API paths are not checked; reset clears the record", async () => {
    fake.reset();
    const bad = { model: "gpt-5", messages: [{ role: "user", content: "hi" }], max_output_tokens: 5 };
    expect((await post(fake, "/v1/chat/completions", bad, { "x-client-bytes": "1" })).status).toBe(200);
    expect((await fetch(`${fake.url}/v1/models`)).status).toBe(200);
    expect(fake.violations).toEqual([]);
    await post(fake, "/v1/chat/completions", bad);
    expect(fake.violations.length).toBe(1);
    fake.reset();
    expect(fake.violations).toEqual([]);
  });

  test("without strict the fake takes any body", async () => {
    const res = await post(loose, "/v1/chat/completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }], max_output_tokens: 5 });
    expect(res.status).toBe(200);
    expect(loose.violations).toEqual([]);
  });
});
