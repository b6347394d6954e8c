/**
 * A client's output-token limit above the model's configured `max_output_tokens` (SPEC 2.3 `models:`)
 * went upstream as written, for the provider to refuse with a 400 (`max_tokens:
 * 100000000000000000000`); it is lowered to the model's limit with a `clamped_max_tokens` warning in
 * `X-Switchyard-Warning` and the route trace, on native (byte) lanes and translated ones alike
 * (pipeline/clamp-output-tokens.ts). A limit within the model's, or a model without one, is sent as the
 * client wrote it. An Anthropic Messages request without `max_tokens` (Anthropic's API refuses one) to an
 * anthropic-compatible provider went with 8192 and no word; it now gets a `defaulted_max_tokens` warning naming what was sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["anth", "anthropic"])}
    models:
      claude-x: { max_output_tokens: 8000 }
      claude-w: { max_output_tokens: 8000, context_window: 200000 }
  - id: oai
    kind: openai
    base_url: "{{FAKE}}/v1"
    models:
      gpt-x: { max_output_tokens: 4000 }
  - id: resp
    kind: openai-responses
    base_url: "{{FAKE}}/v1"
    models:
      gpt-r: { max_output_tokens: 3000 }
  - id: gem
    kind: gemini
    base_url: "{{FAKE}}"
    models:
      gemini-x: { max_output_tokens: 2048 }
  - id: chat
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
  - id: plain
    kind: anthropic-compatible
    base_url: "{{FAKE}}"
    models:
      claude-z: { max_output_tokens: 4000 }
accounts:
  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
  - { id: resp-1, provider: resp, api_key: env:FAKE_KEY }
  - { id: gem-1, provider: gem, api_key: env:FAKE_KEY }
  - { id: chat-1, provider: chat, api_key: env:FAKE_KEY }
  - { id: plain-1, provider: plain, api_key: env:FAKE_KEY }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(() => {
  gw.fake.reset();
});

type Warning = { code: string; message: string };
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify(body) });
const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Warning[];
const clamped = (res: Response) => warnings(res).filter((w) => w.code === "clamped_max_tokens");
const sent = () => gw.fake.requests.at(-1)!.body;
const HI = [{ role: "user", content: "hi" }];

describe("a token limit above the model's max_output_tokens is lowered to it, said in the warning and the trace", () => {
  test("Anthropic client → Anthropic (native bytes): max_tokens 100000000000000000000 goes as 8000", async () => {
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 100000000000000000000, messages: HI });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(8000);
    expect(clamped(res)).toEqual([{ code: "clamped_max_tokens", message: "max_tokens 100000000000000000000 is above the 8000 output tokens anth/claude-x can write (its max_output_tokens); 8000 was sent." }]);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.warnings).toContainEqual(clamped(res)[0]!);
  });

  test("a thinking budget the lowered limit no longer exceeds goes down with it (Anthropic refuses budget ≥ max_tokens)", async () => {
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 64000, thinking: { type: "enabled", budget_tokens: 32000 }, messages: HI });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(8000);
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 7999 });
    expect(clamped(res)[0]!.message).toEndWith("8000 was sent; thinking.budget_tokens 32000 lowered to 7999 (Anthropic takes a budget below max_tokens).");
  });

  test("under interleaved thinking (anthropic-beta interleaved-thinking-2025-05-14) the client's budget is kept: Anthropic takes one above max_tokens", async () => {
    const body = { model: "anth/claude-x", max_tokens: 64000, thinking: { type: "enabled", budget_tokens: 32000 }, messages: HI };
    const res = await post("/v1/messages", body, { "anthropic-beta": "fine-grained-tool-streaming-2025-05-14, interleaved-thinking-2025-05-14" });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(8000);
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 32000 });
    expect(clamped(res)[0]!.message).toBe("max_tokens 64000 is above the 8000 output tokens anth/claude-x can write (its max_output_tokens); 8000 was sent.");

    // Still within the model's context window, which is the limit then (Anthropic's docs).
    const wide = await post("/v1/messages", { ...body, model: "anth/claude-w", thinking: { type: "enabled", budget_tokens: 300000 } }, { "anthropic-beta": "interleaved-thinking-2025-05-14" });
    expect(wide.status).toBe(200);
    await wide.text();
    expect(sent().thinking).toEqual({ type: "enabled", budget_tokens: 200000 });
    expect(clamped(wide)[0]!.message).toEndWith("8000 was sent; thinking.budget_tokens 300000 lowered to 200000 (its context_window; with interleaved thinking the budget may exceed max_tokens).");
  });

  test("a limit above the model's that the Anthropic builder stopped at it (raised by a Chat client's effort budget) is said once, beside the budget's warning", async () => {
    const res = await post("/v1/chat/completions", { model: "anth/claude-x", max_tokens: 9000, reasoning_effort: "high", messages: HI });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(8000);
    expect(warnings(res).map((w) => w.code).sort()).toEqual(["clamped_max_tokens", "clamped_thinking_budget"]);
    expect(clamped(res)[0]!.message).toBe("max_tokens 9000 is above the 8000 output tokens anth/claude-x can write (its max_output_tokens); 8000 was sent.");
  });

  test("Chat client → Chat (native, streamed) and → Anthropic (translated): max_completion_tokens / max_tokens lowered", async () => {
    const res = await post("/v1/chat/completions", { model: "oai/gpt-x", max_completion_tokens: 50000, stream: true, messages: HI });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_completion_tokens).toBe(4000);
    expect(clamped(res)[0]!.message).toStartWith("max_completion_tokens 50000 is above the 4000 output tokens oai/gpt-x");

    const viaHub = await post("/v1/chat/completions", { model: "anth/claude-x", max_tokens: 20000, messages: HI });
    expect(viaHub.status).toBe(200);
    await viaHub.text();
    expect(sent().max_tokens).toBe(8000);
    expect(clamped(viaHub)[0]!.message).toStartWith("max_tokens 20000 is above the 8000 output tokens anth/claude-x");
  });

  test("Responses client → Responses, Gemini client → Gemini (native bytes, camelCase and snake_case)", async () => {
    const r = await post("/v1/responses", { model: "resp/gpt-r", max_output_tokens: 9000, input: "hi" });
    expect(r.status).toBe(200);
    await r.text();
    expect(sent().max_output_tokens).toBe(3000);
    expect(clamped(r)).toHaveLength(1);

    const g = await post("/v1beta/models/gem/gemini-x:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 65536, temperature: 0.5 } });
    expect(g.status).toBe(200);
    await g.text();
    expect(sent().generationConfig).toEqual({ maxOutputTokens: 2048, temperature: 0.5 });
    expect(clamped(g)[0]!.message).toStartWith("generationConfig.maxOutputTokens 65536 is above the 2048 output tokens gem/gemini-x");

    const snake = await post("/v1beta/models/gem/gemini-x:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }], generation_config: { max_output_tokens: 65536 } });
    expect(snake.status).toBe(200);
    await snake.text();
    expect(sent().generation_config).toEqual({ max_output_tokens: 2048 });
  });

  test("a limit within the model's, or a model without max_output_tokens, is sent as written, with no warning", async () => {
    const within = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 8000, messages: HI });
    await within.text();
    expect(sent().max_tokens).toBe(8000);
    expect(clamped(within)).toEqual([]);

    const unknown = await post("/v1/chat/completions", { model: "chat/any-model", max_tokens: 100000, messages: HI });
    expect(unknown.status).toBe(200);
    await unknown.text();
    expect(sent().max_tokens).toBe(100000);
    expect(clamped(unknown)).toEqual([]);
  });
});

describe("an Anthropic Messages request without max_tokens (which Anthropic's API refuses) is sent with a default, said in a defaulted_max_tokens warning", () => {
  const defaulted = (res: Response) => warnings(res).filter((w) => w.code === "defaulted_max_tokens");
  const SAID = "max_tokens was not given; the gateway sent 8192. Anthropic's API requires it and refuses a request without it.";

  test("Anthropic client → anthropic-compatible (tidy lane) without max_tokens: 8192 goes upstream, the header and the trace say so", async () => {
    const res = await post("/v1/messages", { model: "plain/claude-y", messages: HI });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(8192);
    expect(defaulted(res)).toEqual([{ code: "defaulted_max_tokens", message: SAID }]);
    const trace = (await gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.warnings).toContainEqual({ code: "defaulted_max_tokens", message: SAID });
  });

  test("the model's max_output_tokens is the default when configured; nothing put in (kind anthropic's bytes, a Chat target): no warning", async () => {
    const res = await post("/v1/messages", { model: "plain/claude-z", messages: HI, stream: true });
    expect(res.status).toBe(200);
    await res.text();
    expect(sent().max_tokens).toBe(4000);
    expect(defaulted(res)).toEqual([{ code: "defaulted_max_tokens", message: SAID.replace("8192", "4000") }]);

    // The client's bytes as they are: Anthropic itself answers a request without max_tokens.
    const native = await post("/v1/messages", { model: "anth/claude-x", messages: HI });
    expect(native.status).toBe(200);
    await native.text();
    expect(sent().max_tokens).toBeUndefined();
    expect(defaulted(native)).toEqual([]);

    const toChat = await post("/v1/messages", { model: "chat/any-model", messages: HI });
    expect(toChat.status).toBe(200);
    await toChat.text();
    expect(sent().max_tokens).toBeUndefined();
    expect(defaulted(toChat)).toEqual([]);
  });

  test("with max_tokens given, or from a Chat client without a limit (normal there), or counting tokens: no warning", async () => {
    const given = await post("/v1/messages", { model: "plain/claude-y", max_tokens: 100, messages: HI });
    expect(given.status).toBe(200);
    await given.text();
    expect(sent().max_tokens).toBe(100);
    expect(given.headers.get("x-switchyard-warning")).toBeNull();

    const chat = await post("/v1/chat/completions", { model: "plain/claude-y", messages: HI });
    expect(chat.status).toBe(200);
    await chat.text();
    expect(sent().max_tokens).toBe(8192);
    expect(defaulted(chat)).toEqual([]);

    const count = await post("/v1/messages/count_tokens", { model: "plain/claude-y", messages: HI });
    await count.text();
    expect(defaulted(count)).toEqual([]);
  });
});
