/**
 * A reply whose token limit cut a tool call in the middle of its arguments (a Chat upstream's
 * `finish_reason: "length"` after `{"city": "Os`). Gemini clients get a call only whole (an `args`
 * object) and Responses clients run what an `output_item.done` hands them (Codex), so the call cannot
 * reach them as the cut call Chat and Anthropic clients get from their own providers: it reached a
 * Gemini client as `args: {"arguments": "<the text so far>"}` and a Responses client as a completed
 * `function_call`, until 2026-12-04. A broken reply never passes as a finished one (SPEC 6.4): a
 * streamed reply ends with the format's in-band error and the call never closes; a reply for a
 * non-streaming client is a failed attempt with nothing usable (no cooldown, the next target) and a 502.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { ssePayloads } from "../support/openai-chat-helpers.ts";

const suite = gatewaySuite();

const base = { id: "chatcmpl-cut", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x" };
const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const USAGE = `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 } })}\n\n`;
const call = (args: string) => chunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "get_weather", arguments: args } }] });

/** A Chat stream: text, then a call to get_weather whose arguments are `args`, then `finish`. */
const chatStream = (args: string[], finish: string) =>
  chunk({ role: "assistant", content: "" }) + chunk({ content: "Checking." }) + call("") + args.map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] })).join("") + chunk({}, finish) + USAGE + "data: [DONE]\n\n";
const CUT = chatStream(['{"city": ', '"Os'], "length");
/** The same reply as one JSON body (a non-streaming request). */
const chatJson = (args: string, finish: string) => ({
  id: "chatcmpl-cut",
  object: "chat.completion",
  created: 1750000000,
  model: "gpt-x",
  choices: [{ index: 0, message: { role: "assistant", content: "Checking.", tool_calls: [{ id: "call_w", type: "function", function: { name: "get_weather", arguments: args } }] }, finish_reason: finish }],
  usage: { prompt_tokens: 9, completion_tokens: 20, total_tokens: 29 },
});

const post = (path: string, body: unknown) => fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const GEMINI_BODY = { contents: [{ role: "user", parts: [{ text: "weather in Oslo?" }] }], tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }] };
const RESPONSES_BODY = { model: "chat/gpt-x", input: "weather in Oslo?", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }] };
const lastOutcome = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1)?.outcome;
const MESSAGE = "The upstream reached its output token limit in the middle of the arguments of a call to get_weather: the call is incomplete and was not passed on. Allow more output tokens, or ask for less.";

describe("a tool call cut by the token limit, streamed", () => {
  test("Gemini client: the text, then the error chunk; no functionCall part, no finishReason; logged as an upstream error", async () => {
    suite.gw.fake.enqueue({ sse: CUT });
    const res = await post("/v1beta/models/chat/gpt-x:streamGenerateContent?alt=sse", GEMINI_BODY);
    expect(res.status).toBe(200);
    const chunks = ssePayloads(await res.text());
    expect(chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])).toEqual([{ text: "Checking." }]);
    expect(chunks.some((c) => c.candidates?.[0]?.finishReason)).toBe(false);
    expect(chunks.at(-1)).toEqual({ error: { code: 502, message: MESSAGE, status: expect.any(String) } });
    expect(lastOutcome()).toBe("upstream_error");
  });

  test("Responses client: the message item, then error and response.failed; the call is announced but never done, not in the output", async () => {
    suite.gw.fake.enqueue({ sse: CUT });
    const res = await post("/v1/responses", { ...RESPONSES_BODY, stream: true });
    expect(res.status).toBe(200);
    const events = ssePayloads(await res.text());
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item.type);
    expect(done).toEqual(["message"]);
    expect(events.some((e) => e.type === "response.function_call_arguments.done")).toBe(false);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "response.failed"]);
    const failed = events.at(-1).response;
    expect(failed.status).toBe("failed");
    expect(failed.error.message).toBe(MESSAGE);
    expect(failed.output.map((o: { type: string }) => o.type)).toEqual(["message"]);
    expect(lastOutcome()).toBe("upstream_error");
  });

  test("an Anthropic client gets the cut call as its own provider sends one: the fragments, then max_tokens", async () => {
    suite.gw.fake.enqueue({ sse: CUT });
    const anth = await post("/v1/messages", { model: "chat/gpt-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "weather in Oslo?" }] });
    const text = await anth.text();
    expect(text).toContain('"partial_json":"\\"Os"');
    expect(text).toContain('"stop_reason":"max_tokens"');
    expect(text).not.toContain("event: error");
  });

  test("complete arguments at a token-limit finish, or broken ones at a plain finish, pass as before", async () => {
    suite.gw.fake.enqueue({ sse: chatStream(['{"city": ', '"Oslo"}'], "length") });
    const whole = ssePayloads(await (await post("/v1beta/models/chat/gpt-x:streamGenerateContent?alt=sse", GEMINI_BODY)).text());
    expect(whole.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])).toContainEqual({ functionCall: { id: "call_w", name: "get_weather", args: { city: "Oslo" } } });
    expect(whole.at(-1).candidates[0].finishReason).toBe("MAX_TOKENS");

    suite.gw.fake.enqueue({ sse: chatStream(['{"city": ', '"Os'], "tool_calls") });
    const events = ssePayloads(await (await post("/v1/responses", { ...RESPONSES_BODY, stream: true })).text());
    expect(events.find((e) => e.type === "response.output_item.done" && e.item.type === "function_call")?.item.arguments).toBe('{"city": "Os');
    expect(events.at(-1).type).toBe("response.completed");
  });
});

describe("a tool call cut by the token limit right after its name (arguments \"\" so far)", () => {
  const EMPTY = "The upstream reached its output token limit right after the name of a call to get_weather: the call is incomplete and was not passed on. Allow more output tokens, or ask for less.";

  test("streamed: a Gemini client gets the error chunk, a Responses client error + response.failed; no call passes as one without arguments", async () => {
    suite.gw.fake.enqueue({ sse: chatStream([], "length") });
    const chunks = ssePayloads(await (await post("/v1beta/models/chat/gpt-x:streamGenerateContent?alt=sse", GEMINI_BODY)).text());
    expect(chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])).toEqual([{ text: "Checking." }]);
    expect(chunks.at(-1)).toEqual({ error: { code: 502, message: EMPTY, status: expect.any(String) } });
    expect(lastOutcome()).toBe("upstream_error");

    suite.gw.fake.enqueue({ sse: chatStream([], "length") });
    const events = ssePayloads(await (await post("/v1/responses", { ...RESPONSES_BODY, stream: true })).text());
    expect(events.filter((e) => e.type === "response.output_item.done").map((e) => e.item.type)).toEqual(["message"]);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "response.failed"]);
    expect(events.at(-1).response.error.message).toBe(EMPTY);
  });

  test("not streamed: a 502 naming the call for Gemini and Responses clients", async () => {
    suite.gw.fake.handle(() => ({ json: chatJson("", "length") }));
    const gem = await post("/v1beta/models/chat/gpt-x:generateContent", GEMINI_BODY);
    expect(gem.status).toBe(502);
    expect(((await gem.json()) as { error: { message: string } }).error.message).toBe(EMPTY);
    const resp = await post("/v1/responses", RESPONSES_BODY);
    expect(resp.status).toBe(502);
    expect(((await resp.json()) as { error: { message: string } }).error.message).toBe(EMPTY);
  });

  test("a call without arguments that finished (finish_reason tool_calls) passes as one, streamed or not", async () => {
    suite.gw.fake.enqueue({ sse: chatStream([], "tool_calls") });
    const chunks = ssePayloads(await (await post("/v1beta/models/chat/gpt-x:streamGenerateContent?alt=sse", GEMINI_BODY)).text());
    expect(chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? [])).toContainEqual({ functionCall: { id: "call_w", name: "get_weather", args: {} } });
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");

    suite.gw.fake.enqueue({ sse: chatStream([], "tool_calls") });
    const events = ssePayloads(await (await post("/v1/responses", { ...RESPONSES_BODY, stream: true })).text());
    expect(events.find((e) => e.type === "response.output_item.done" && e.item.type === "function_call")?.item.name).toBe("get_weather");
    expect(events.at(-1).type).toBe("response.completed");

    suite.gw.fake.handle(() => ({ json: chatJson("", "tool_calls") }));
    const resp = await post("/v1/responses", RESPONSES_BODY);
    expect(resp.status).toBe(200);
    expect(((await resp.json()) as { output: Array<{ type: string }> }).output.map((o) => o.type)).toContain("function_call");
  });
});

describe("a tool call cut by the token limit, for a non-streaming client", () => {
  test("Gemini and Responses clients: a 502 naming the cut call in their error format; the model is not cooled down", async () => {
    suite.gw.fake.handle(() => ({ json: chatJson('{"city": "Os', "length") }));
    const gem = await post("/v1beta/models/chat/gpt-x:generateContent", GEMINI_BODY);
    expect(gem.status).toBe(502);
    expect(((await gem.json()) as { error: { message: string } }).error.message).toBe(MESSAGE);
    const resp = await post("/v1/responses", RESPONSES_BODY);
    expect(resp.status).toBe(502);
    expect(((await resp.json()) as { error: { message: string } }).error.message).toBe(MESSAGE);
    const accounts = (await (await fetch(`${suite.gw.url}/admin/api/accounts`)).json()) as { accounts: Array<{ providerId: string; cooldowns: unknown[] }> };
    expect(accounts.accounts.filter((a) => a.providerId === "chat").flatMap((a) => a.cooldowns)).toEqual([]);
  });

  test("a Chat client gets the reply as its provider sent it: finish_reason length, the arguments so far", async () => {
    suite.gw.fake.handle(() => ({ json: chatJson('{"city": "Os', "length") }));
    const res = await post("/v1/chat/completions", { model: "chat/gpt-x", messages: [{ role: "user", content: "weather in Oslo?" }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ function: { arguments: string } }> } }> };
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.choices[0]!.message.tool_calls[0]!.function.arguments).toBe('{"city": "Os');
  });

  // An Anthropic reply that is not streamed carries a call's input only as a JSON object, which the
  // arguments so far are not: the call comes with `input: {}` (as Anthropic's own API, which keeps only
  // the parameters that were complete), and X-Switchyard-Warning says its arguments were cut (until
  // session 38 nothing said so: an agent could read `{}` as a call without arguments).
  const CUT_WARNING = {
    code: "tool_arguments_cut",
    message:
      "The upstream's output token limit cut the arguments of a call to get_weather (12 characters so far, not complete JSON); a reply that is not streamed carries a call's input only as a JSON object, so its input is {}. Allow more output tokens, or stream the request to get the arguments so far.",
  };
  const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;

  for (const [lane, reply] of [
    ["a JSON reply", () => ({ json: chatJson('{"city": "Os', "length") })],
    ["a streamed reply", () => ({ sse: CUT })],
  ] as const) {
    test(`an Anthropic client: the call with input {}, max_tokens, and a warning that its arguments were cut (upstream ${lane})`, async () => {
      suite.gw.fake.handle(reply);
      const res = await post("/v1/messages", { model: "chat/gpt-x", max_tokens: 20, messages: [{ role: "user", content: "weather in Oslo?" }] });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { stop_reason: string; content: Array<Record<string, unknown>> };
      expect(body.stop_reason).toBe("max_tokens");
      expect(body.content).toEqual([
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_w", name: "get_weather", input: {} },
      ]);
      expect(warnings(res)).toContainEqual(CUT_WARNING);
    });
  }

  test("an Anthropic client: no such warning for complete arguments at the limit, nor for a call the limit cut right after its name (both modes give it as {})", async () => {
    suite.gw.fake.handle(() => ({ json: chatJson('{"city": "Oslo"}', "length") }));
    const whole = await post("/v1/messages", { model: "chat/gpt-x", max_tokens: 20, messages: [{ role: "user", content: "weather in Oslo?" }] });
    expect(((await whole.json()) as { content: Array<{ input?: unknown }> }).content[1]!.input).toEqual({ city: "Oslo" });
    expect(warnings(whole).map((w) => w.code)).not.toContain("tool_arguments_cut");
    suite.gw.fake.handle(() => ({ json: chatJson("", "length") }));
    const empty = await post("/v1/messages", { model: "chat/gpt-x", max_tokens: 20, messages: [{ role: "user", content: "weather in Oslo?" }] });
    expect(((await empty.json()) as { content: Array<{ input?: unknown }> }).content[1]!.input).toEqual({});
    expect(warnings(empty).map((w) => w.code)).not.toContain("tool_arguments_cut");
  });
});
