/**
 * The Gemini client endpoints (SPEC 2.1) end to end: `@google/genai` through the real gateway to every
 * provider format, streamed and not, text and function calls, usage; the raw SSE grammar; errors in
 * Gemini's shape; client keys from `x-goog-api-key` and `?key=`; countTokens and the model list.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FinishReason, GoogleGenAI, Type, type GenerateContentResponse, type Tool } from "@google/genai";
import { simpleReply, type FakeFormat } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const FAKE_TEXT = "Hello from the fake upstream.";
const genai = (apiVersion?: string) => new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: gw.url, ...(apiVersion ? { apiVersion } : {}) } });

/** Every provider format behind the Gemini client: model name, the format the fake sees, its path. */
const PROVIDERS: Array<{ model: string; format: FakeFormat; path: RegExp }> = [
  { model: "gem/gemini-test", format: "gemini", path: /^\/v1beta\/models\/gemini-test:(generateContent|streamGenerateContent\?alt=sse)$/ },
  { model: "anth/claude-test", format: "anthropic-messages", path: /^\/v1\/messages$/ },
  { model: "anthc/claude-test", format: "anthropic-messages", path: /^\/v1\/messages$/ },
  { model: "oai/gpt-test", format: "openai-chat", path: /^\/v1\/chat\/completions$/ },
  { model: "chat/gpt-test", format: "openai-chat", path: /^\/v1\/chat\/completions$/ },
  { model: "resp/gpt-test", format: "openai-responses", path: /^\/v1\/responses$/ },
];

async function collect(stream: AsyncGenerator<GenerateContentResponse>): Promise<GenerateContentResponse[]> {
  const out: GenerateContentResponse[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

const WEATHER_TOOL: Tool = {
  functionDeclarations: [
    {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING }, days: { type: Type.INTEGER, nullable: true } }, required: ["city"] },
    },
  ],
};

/** A JSON body, untyped (tests read what the gateway wrote). */
const json = (r: Response): Promise<any> => r.json();

describe("@google/genai to every provider format", () => {
  for (const p of PROVIDERS) {
    test(`${p.model}: non-streamed text, finish reason and usage`, async () => {
      gw.fake.reset();
      const r = await genai().models.generateContent({ model: p.model, contents: "hi" });
      expect(r.text).toBe(FAKE_TEXT);
      expect(r.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      expect(r.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
      // Translated replies name the model the client asked for; the native pair passes Gemini's own.
      expect(r.modelVersion).toBe(p.format === "gemini" ? "gemini-test" : p.model);
      const seen = gw.fake.requests.at(-1)!;
      expect(seen.format).toBe(p.format);
      expect(seen.path).toMatch(p.path);
      expect(seen.stream).toBe(false);
    });

    test(`${p.model}: streamed text arrives in pieces, the last chunk has the finish reason and usage`, async () => {
      gw.fake.reset();
      const chunks = await collect(await genai().models.generateContentStream({ model: p.model, contents: "hi" }));
      expect(chunks.map((c) => c.text ?? "").join("")).toBe(FAKE_TEXT);
      expect(chunks.length).toBeGreaterThan(2);
      const last = chunks.at(-1)!;
      expect(last.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
      expect(last.usageMetadata).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
      expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
      expect(gw.fake.requests.at(-1)!.stream).toBe(true);
    });

    for (const stream of [false, true]) {
      test(`${p.model}: a function call reaches the SDK whole (${stream ? "streamed" : "not streamed"})`, async () => {
        gw.fake.reset();
        gw.fake.handle((req) => simpleReply(req.format!, { toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Oslo", days: 2 } }], usage: { input: 20, output: 9 } }, req.stream));
        const params = { model: p.model, contents: "Weather in Oslo?", config: { tools: [WEATHER_TOOL] } };
        const chunks = stream ? await collect(await genai().models.generateContentStream(params)) : [await genai().models.generateContent(params)];
        const calls = chunks.flatMap((c) => c.functionCalls ?? []);
        expect(calls).toHaveLength(1);
        expect(calls[0]!.name).toBe("get_weather");
        expect(calls[0]!.args).toEqual({ city: "Oslo", days: 2 });
        // Translated calls carry the provider's call id (Gemini itself sends none: passed as is).
        if (p.format !== "gemini") expect(calls[0]!.id).toBe("call_w1");
        const last = chunks.at(-1)!;
        expect(last.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
        expect(last.usageMetadata).toMatchObject({ promptTokenCount: 20, candidatesTokenCount: 9, totalTokenCount: 29 });
        // The tool declaration reached the provider in its own format.
        const sent = gw.fake.requests.at(-1)!.body;
        const names = p.format === "gemini" ? sent.tools[0].functionDeclarations.map((d: any) => d.name) : sent.tools.map((t: any) => t.name ?? t.function?.name);
        expect(names).toEqual(["get_weather"]);
        gw.fake.handle(undefined);
      });
    }
  }
});

describe("tool round trip: a Gemini history with a call and its result, translated", () => {
  const history = (id?: string) => [
    { role: "user", parts: [{ text: "Weather in Oslo?" }] },
    { role: "model", parts: [{ functionCall: { ...(id ? { id } : {}), name: "get_weather", args: { city: "Oslo" } } }] },
    { role: "user", parts: [{ functionResponse: { ...(id ? { id } : {}), name: "get_weather", response: { output: "12C and rain" } } }] },
  ];

  test("to Anthropic: tool_use and tool_result share the id the client kept", async () => {
    gw.fake.reset();
    const r = await genai().models.generateContent({ model: "anth/claude-test", contents: history("get_weather__toolu_01"), config: { tools: [WEATHER_TOOL] } });
    expect(r.text).toBe(FAKE_TEXT);
    const msgs = gw.fake.requests.at(-1)!.body.messages;
    expect(msgs[1].content[0]).toMatchObject({ type: "tool_use", id: "get_weather__toolu_01", name: "get_weather", input: { city: "Oslo" } });
    expect(msgs[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "get_weather__toolu_01", content: "12C and rain" });
  });

  test("to Chat: ids minted for a history without ids pair the call and its result", async () => {
    gw.fake.reset();
    await genai().models.generateContent({ model: "oai/gpt-test", contents: history(), config: { tools: [WEATHER_TOOL] } });
    const msgs = gw.fake.requests.at(-1)!.body.messages;
    const call = msgs[1].tool_calls[0];
    expect(call.function).toEqual({ name: "get_weather", arguments: JSON.stringify({ city: "Oslo" }) });
    expect(msgs[2]).toMatchObject({ role: "tool", tool_call_id: call.id, content: "12C and rain" });
    // The declared schema became JSON Schema (lower-case types, nullable as a type union).
    expect(gw.fake.requests.at(-1)!.body.tools[0].function.parameters).toEqual({
      type: "object",
      properties: { city: { type: "string" }, days: { type: ["integer", "null"] } },
      required: ["city"],
    });
  });

  test("to Responses: function_call and function_call_output items", async () => {
    gw.fake.reset();
    await genai().models.generateContent({ model: "resp/gpt-test", contents: history("c9"), config: { tools: [WEATHER_TOOL] } });
    const input = gw.fake.requests.at(-1)!.body.input;
    expect(input.find((i: any) => i.type === "function_call")).toMatchObject({ call_id: "c9", name: "get_weather" });
    expect(input.find((i: any) => i.type === "function_call_output")).toMatchObject({ call_id: "c9", output: "12C and rain" });
  });

  test("an error result ({error}) reaches Anthropic as is_error", async () => {
    gw.fake.reset();
    const contents = history("t1");
    contents[2] = { role: "user", parts: [{ functionResponse: { id: "t1", name: "get_weather", response: { error: "city unknown" } } as any }] };
    await genai().models.generateContent({ model: "anth/claude-test", contents, config: { tools: [WEATHER_TOOL] } });
    expect(gw.fake.requests.at(-1)!.body.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "t1", is_error: true, content: "city unknown" });
  });
});

describe("a tool name Anthropic refuses (an MCP client's dotted name), through the gateway", () => {
  const MCP_TOOL: Tool = { functionDeclarations: [{ name: "docker.io:list_images", parameters: { type: Type.OBJECT, properties: {} } }] };

  for (const stream of [false, true]) {
    test(`reaches Anthropic as a name it takes; the call comes back with the client's name (${stream ? "streamed" : "not streamed"})`, async () => {
      gw.fake.reset();
      gw.fake.handle((req) => simpleReply(req.format!, { toolCalls: [{ id: "toolu_1", name: "docker_io_list_images", arguments: {} }] }, req.stream));
      const params = { model: "anth/claude-test", contents: "list images", config: { tools: [MCP_TOOL] } };
      const chunks = stream ? await collect(await genai().models.generateContentStream(params)) : [await genai().models.generateContent(params)];
      expect(gw.fake.requests.at(-1)!.body.tools.map((t: any) => t.name)).toEqual(["docker_io_list_images"]);
      expect(chunks.flatMap((c) => c.functionCalls ?? []).map((c) => c.name)).toEqual(["docker.io:list_images"]);
      gw.fake.handle(undefined);
    });
  }
});

describe("native Gemini → gemini provider", () => {
  test("the client's bytes reach the provider unchanged; the reply's thought signature comes back as sent", async () => {
    gw.fake.reset();
    const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { seed: 7, temperature: 0.3 }, safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }] });
    const sse =
      `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"sig","thoughtSignature":"c2lnbmF0dXJl"}]},"index":0}],"responseId":"r1"}\r\n\r\n` +
      `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"responseId":"r1"}\r\n\r\n`;
    gw.fake.enqueue({ sse });
    const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-test:streamGenerateContent?alt=sse`, { method: "POST", body, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(sse);
    const seen = gw.fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1beta/models/gemini-test:streamGenerateContent?alt=sse");
    expect(JSON.stringify(seen.body)).toBe(body);
  });

  test("history carrying another provider's tagged signature goes through the hub: stripped, with a warning", async () => {
    gw.fake.reset();
    const contents = [
      { role: "user", parts: [{ text: "hi" }] },
      { role: "model", parts: [{ text: "thinking", thought: true, thoughtSignature: "sy|anthropic|EqQBCkgIARABGAIiQL" }, { text: "Hello." }] },
      { role: "user", parts: [{ text: "again" }] },
    ];
    const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-test:generateContent`, { method: "POST", body: JSON.stringify({ contents }) });
    expect(res.status).toBe(200);
    const warning = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]");
    expect(warning.map((w: any) => w.code)).toContain("stripped_reasoning_state");
    expect(JSON.stringify(gw.fake.requests.at(-1)!.body)).not.toContain("sy|");
  });

  test("an Anthropic thinking signature handed to a Gemini client is tagged and goes back to Anthropic untagged", async () => {
    gw.fake.reset();
    const sse =
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n` +
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"QW50aHJvcGljU2ln"}}\n\n` +
      `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n` +
      `event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}\n\n` +
      `event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n` +
      `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}\n\n` +
      `event: message_stop\ndata: {"type":"message_stop"}\n\n`;
    gw.fake.enqueue({ sse });
    const chunks = await collect(await genai().models.generateContentStream({ model: "anth/claude-test", contents: "hi" }));
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts.filter((p) => p.thought).map((p) => p.text).join("")).toBe("Let me think.");
    const signed = parts.find((p) => p.thoughtSignature);
    expect(signed?.thoughtSignature).toBe("sy|anthropic|QW50aHJvcGljU2ln");
    expect(chunks.map((c) => c.text ?? "").join("")).toBe("Done.");

    // The client sends the turn back: Anthropic gets its own signature, untagged, on the thinking block.
    gw.fake.reset();
    const model = { role: "model", parts: [{ text: "Let me think.", thought: true }, { text: "", thought: true, thoughtSignature: signed!.thoughtSignature }, { text: "Done." }] };
    await genai().models.generateContent({ model: "anth/claude-test", contents: [{ role: "user", parts: [{ text: "hi" }] }, model, { role: "user", parts: [{ text: "more" }] }], config: { thinkingConfig: { thinkingBudget: 2048 } } });
    const sent = gw.fake.requests.at(-1)!.body;
    expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: "Let me think.", signature: "QW50aHJvcGljU2ln" });
  });
});

describe("raw SSE grammar", () => {
  test("data: lines only, one JSON object per event, no [DONE], one responseId, finishReason and usage on the last event only", async () => {
    gw.fake.reset();
    const res = await fetch(`${gw.url}/v1beta/models/anth/claude-test:streamGenerateContent?alt=sse`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    expect(text.endsWith("\n\n")).toBe(true);
    const events = text.slice(0, -2).split("\n\n");
    expect(events.length).toBe(6);
    const objs = events.map((e) => {
      expect(e.startsWith("data: ")).toBe(true);
      expect(e.includes("\n")).toBe(false);
      return JSON.parse(e.slice(6));
    });
    expect(text).not.toContain("[DONE]");
    expect(text).not.toContain("event:");
    expect(new Set(objs.map((o) => o.responseId)).size).toBe(1);
    for (const o of objs.slice(0, -1)) {
      expect(o.candidates[0].finishReason).toBeUndefined();
      expect(o.usageMetadata).toBeUndefined();
      expect(o.candidates[0].content.role).toBe("model");
      expect(o.candidates[0].content.parts).toHaveLength(1);
    }
    const last = objs.at(-1);
    expect(last.candidates[0]).toEqual({ content: { role: "model", parts: [] }, finishReason: "STOP", index: 0 });
    expect(last.usageMetadata).toEqual({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
  });

  test("a provider stream cut off after the first token ends with one in-band error chunk and no finishReason", async () => {
    gw.fake.reset();
    const sse =
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n` +
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}}\n\n`;
    gw.fake.enqueue({ sse });
    const res = await fetch(`${gw.url}/v1beta/models/anth/claude-test:streamGenerateContent?alt=sse`, { method: "POST", body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }) });
    const events = (await res.text()).trim().split("\n\n").map((e) => JSON.parse(e.slice(6)));
    expect(events[0].candidates[0].content.parts[0].text).toBe("Partial");
    expect(events.at(-1)).toEqual({ error: { code: 502, message: "The upstream stream ended before the reply was complete.", status: "INTERNAL" } });
    expect(events.some((e) => e.candidates?.[0]?.finishReason)).toBe(false);
    // The SDK raises on the error chunk instead of reading a finished reply.
    gw.fake.enqueue({ sse });
    const s = await genai().models.generateContentStream({ model: "anth/claude-test", contents: "hi" });
    await expect(collect(s)).rejects.toThrow(/ended before the reply was complete/);
  });

  test("a provider that reports no usage: the SDK sees the gateway's estimate (not zero counts), on the last chunk only, streamed or not", async () => {
    gw.fake.reset();
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    gw.fake.enqueue({ sse: chunk({ role: "assistant", content: "ok" }, null) + chunk({}, "stop") + "data: [DONE]\n\n" });
    const chunks = await collect(await genai().models.generateContentStream({ model: "chat/gpt-test", contents: "hi" }));
    expect(chunks.map((c) => c.text ?? "").join("")).toBe("ok");
    expect(chunks.at(-1)!.candidates?.[0]?.finishReason).toBe(FinishReason.STOP);
    // "hi" is 1 token, "ok" 1 (characters / 4, rounded up: pipeline/estimate-reply-usage.ts)
    expect(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined)).toBe(true);
    expect(chunks.at(-1)!.usageMetadata).toEqual({ promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 });
    gw.fake.enqueue({ json: { id: "c2", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] } });
    const r = await genai().models.generateContent({ model: "chat/gpt-test", contents: "hi" });
    expect(r.text).toBe("ok");
    expect(r.usageMetadata).toEqual({ promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 });
  });

  test("native lane: a provider stream reset inside an event never hands the client the torn JSON; the in-band error chunk follows the whole events", async () => {
    const chunk = (text: string) => `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], modelVersion: "gemini-test" })}\r\n\r\n`;
    const sse = chunk("Partial answer ") + chunk("that goes on and on");
    // Reset in the middle of the second event's JSON (what Gemini CLI showed as "Unterminated string in JSON").
    const cut = Buffer.byteLength(sse.slice(0, sse.indexOf("goes")));
    for (let i = 0; i < 2; i++) gw.fake.enqueue({ sse, split_at: [Buffer.byteLength(chunk("Partial answer "))], reset_after_bytes: cut });
    const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-test:streamGenerateContent?alt=sse`, { method: "POST", body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }) });
    expect(res.status).toBe(200);
    const events = (await res.text()).split(/\r?\n\r?\n/).filter((e) => e.length > 0).map((e) => JSON.parse(e.slice(6)));
    expect(events).toHaveLength(2);
    expect(events[0].candidates[0].content.parts[0].text).toBe("Partial answer ");
    expect(events[1]).toEqual({ error: { code: 502, message: expect.stringContaining("upstream"), status: "INTERNAL" } });
    // The SDK raises on the error chunk, not on a JSON parse error.
    const s = await genai().models.generateContentStream({ model: "gem/gemini-test", contents: "hi" });
    const err = await collect(s).then(() => undefined, (e: unknown) => e);
    expect(String(err)).not.toMatch(/JSON/);
    expect(String(err)).toMatch(/upstream/i);
  });
});

describe("errors in Gemini's shape", () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${gw.url}${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

  test("an unknown provider prefix is a 404 NOT_FOUND", async () => {
    const res = await post("/v1beta/models/nope/x:generateContent", JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }));
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error).toMatchObject({ code: 404, status: "NOT_FOUND" });
    expect(body.error.message).toContain("nope");
  });

  test("malformed JSON, missing contents and a bad role are 400 INVALID_ARGUMENT", async () => {
    for (const body of ["{not json", JSON.stringify({ generationConfig: {} }), JSON.stringify({ contents: [] }), JSON.stringify({ contents: [{ role: "assistant", parts: [{ text: "x" }] }] })]) {
      const res = await post("/v1beta/models/anth/claude-test:generateContent", body);
      expect(res.status).toBe(400);
      const j = await json(res);
      expect(j.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    }
  });

  test("streamGenerateContent without alt=sse and unknown methods are refused in Gemini's shape", async () => {
    const a = await post("/v1beta/models/anth/claude-test:streamGenerateContent", JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }));
    expect(a.status).toBe(400);
    expect((await json(a)).error.message).toContain("alt=sse");
    const b = await post("/v1beta/models/anth/claude-test:embedContent", JSON.stringify({ content: { parts: [{ text: "hi" }] } }));
    expect(b.status).toBe(404);
    expect((await json(b)).error).toMatchObject({ code: 404, status: "NOT_FOUND" });
  });

  test("a path without {model}:method, with an empty or undecodable model, or a method's path asked with GET is a JSON 404 in Gemini's shape", async () => {
    const body = JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] });
    const before = gw.fake.requests.length;
    for (const path of ["/v1beta/models/anth/claude-test", "/v1beta/models/:generateContent", "/v1beta/models/anth/claude-test:", "/v1beta/models/%E0%A4%A:generateContent", "/v1/models/anth/claude-test"]) {
      const res = await post(path, body);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const error = (await json(res)).error;
      expect(error).toMatchObject({ code: 404, status: "NOT_FOUND" });
      expect(error.message).toContain(`Unknown path: POST ${path};`);
    }
    const get = await fetch(`${gw.url}/v1beta/models/anth/claude-test:generateContent`);
    expect(get.status).toBe(404);
    expect((await json(get)).error).toMatchObject({ code: 404, status: "NOT_FOUND", message: "models/anth/claude-test:generateContent is not found for this gateway." });
    expect(gw.fake.requests.length).toBe(before);
  });

  test("an unknown path under /v1beta, or asked by a Gemini client, is a JSON 404 in Gemini's shape (it carried OpenAI's members too); other clients get OpenAI's", async () => {
    const goog = { "x-goog-api-key": "placeholder" };
    for (const [method, path, headers] of [
      ["POST", "/v1beta/cachedContents", {}],
      ["GET", "/v1beta/files", {}],
      ["GET", "/v1beta", {}],
      ["POST", "/v1/cachedContents", goog],
      ["GET", "/v1/files", { "x-goog-api-client": "google-genai-sdk/1.0.0" }],
    ] as const) {
      const res = await fetch(`${gw.url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: method === "GET" ? undefined : "{}" });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const error = (await json(res)).error;
      expect(error).toEqual({ code: 404, status: "NOT_FOUND", message: `Unknown path: ${method} ${path}` });
    }
    // a Gemini method's path asked with another method: a 405 with Allow, in Gemini's shape (it was this 404)
    for (const [method, path] of [
      ["DELETE", "/v1beta/models/anth/claude-test:generateContent"],
      ["PUT", "/v1/models/anth/claude-test:generateContent"],
    ] as const) {
      const res = await fetch(`${gw.url}${path}`, { method, headers: { "content-type": "application/json" }, body: "{}" });
      expect([res.status, res.headers.get("allow")]).toEqual([405, "GET, HEAD, POST"]);
      expect((await json(res)).error).toEqual({ code: 405, status: "INVALID_ARGUMENT", message: `The method ${method} is not allowed on ${path}; it takes GET, HEAD or POST.` });
    }
    const plain = await fetch(`${gw.url}/v1/cachedContents`, { method: "POST", body: "{}" });
    expect(plain.status).toBe(404);
    expect((await json(plain)).error).toEqual({ message: "Unknown path: POST /v1/cachedContents", type: "invalid_request_error", param: null, code: "unknown_url" });
    // What @google/genai itself reads: its files API (GET /v1beta/files) fails with Google's status.
    const thrown = await genai().files.list().then(() => undefined, (e: unknown) => e);
    expect(thrown).toMatchObject({ status: 404 });
    expect(String((thrown as Error).message)).toContain('"status":"NOT_FOUND"');
  });

  test("an upstream 429 reaches the SDK as RESOURCE_EXHAUSTED with Retry-After", async () => {
    gw.fake.reset();
    gw.fake.handle(() => ({ status: 429, headers: { "retry-after": "7" }, json: { type: "error", error: { type: "rate_limit_error", message: "slow down" } } }));
    // anthc: its account cools down for 7 s, which no later test uses.
    const res = await post("/v1beta/models/anthc/claude-test:generateContent", JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }));
    gw.fake.handle(undefined);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect((await json(res)).error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
  });
});

describe("the /v1/models/{model}:… routes, countTokens and the model list", () => {
  test("@google/genai with apiVersion v1 is served under /v1/models/", async () => {
    gw.fake.reset();
    const r = await genai("v1").models.generateContent({ model: "anth/claude-test", contents: "hi" });
    expect(r.text).toBe(FAKE_TEXT);
    const chunks = await collect(await genai("v1").models.generateContentStream({ model: "oai/gpt-test", contents: "hi" }));
    expect(chunks.map((c) => c.text ?? "").join("")).toBe(FAKE_TEXT);
  });

  test("countTokens: estimated locally for a non-Gemini target, forwarded to a Gemini provider", async () => {
    const local = await genai().models.countTokens({ model: "anth/claude-test", contents: "hello there, how are you today?" });
    expect(local.totalTokens).toBeGreaterThan(0);
    gw.fake.reset();
    gw.fake.handle((req) => (req.path.includes(":countTokens") ? { json: { totalTokens: 4242 } } : undefined));
    const forwarded = await genai().models.countTokens({ model: "gem/gemini-test", contents: "hello" });
    gw.fake.handle(undefined);
    expect(forwarded.totalTokens).toBe(4242);
    expect(gw.fake.requests.at(-1)!.path).toBe("/v1beta/models/gemini-test:countTokens");
    expect(gw.fake.requests.at(-1)!.headers["x-goog-api-key"]).toBe("sk-fake-upstream-secret");
  });
});

describe("client keys", () => {
  let strict: TestGateway;
  let secret: string;
  beforeAll(async () => {
    strict = await startGateway(
      `
server: { require_api_key: true }
${providersAtFake(["anth", "anthropic"])}
    models:
      claude-test: { context_window: 200000, max_output_tokens: 32000 }
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
keys:
  - name: laptop
    key: env:LAPTOP_KEY
`,
      { env: { LAPTOP_KEY: "sy-gemini-client-key-0001" } },
    );
    secret = "sy-gemini-client-key-0001";
  });
  afterAll(async () => {
    await strict?.stop();
  });
  const body = JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] });

  test("no key or a wrong key is 401 UNAUTHENTICATED; x-goog-api-key and ?key= are accepted", async () => {
    const none = await fetch(`${strict.url}/v1beta/models/anth/claude-test:generateContent`, { method: "POST", body });
    expect(none.status).toBe(401);
    const refusal = (await json(none)).error;
    expect(refusal).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    // the refusal names the ways a Gemini client sends its key (it named only Authorization and x-api-key)
    expect(refusal.message).toStartWith("An API key is required: send a client key of this gateway as x-goog-api-key: KEY or ?key=KEY");
    const wrong = await fetch(`${strict.url}/v1beta/models/anth/claude-test:generateContent?key=nope`, { method: "POST", body });
    expect(wrong.status).toBe(401);
    const header = await fetch(`${strict.url}/v1beta/models/anth/claude-test:generateContent`, { method: "POST", body, headers: { "x-goog-api-key": secret } });
    expect(header.status).toBe(200);
    const query = await fetch(`${strict.url}/v1beta/models/anth/claude-test:generateContent?key=${secret}`, { method: "POST", body });
    expect(query.status).toBe(200);
    // The key before alt=sse (REST examples write it that way): the stream is still recognised as SSE.
    const streamed = await fetch(`${strict.url}/v1beta/models/anth/claude-test:streamGenerateContent?key=${secret}&alt=sse`, { method: "POST", body });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const frames = (await streamed.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)));
    expect(frames.map((f) => f.candidates[0].content.parts.map((p: { text?: string }) => p.text ?? "").join("")).join("")).toBe(FAKE_TEXT);
    const sdk = new GoogleGenAI({ apiKey: secret, httpOptions: { baseUrl: strict.url } });
    expect((await sdk.models.generateContent({ model: "anth/claude-test", contents: "hi" })).text).toBe(FAKE_TEXT);
  });

  test("the browser rules (SPEC 2.6) apply: a foreign Origin needs a key, and x-goog-api-key counts as one", async () => {
    const url = `${strict.url}/v1beta/models/anth/claude-test:generateContent`;
    const refused = await fetch(url, { method: "POST", body, headers: { origin: "http://evil.example" } });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.status).toBe("PERMISSION_DENIED");
    const keyed = await fetch(url, { method: "POST", body, headers: { origin: "http://evil.example", "x-goog-api-key": secret } });
    expect(keyed.status).toBe(200);
    const rebound = await fetch(url, { method: "POST", body, headers: { host: "attacker.example", "x-goog-api-key": secret } });
    expect(rebound.status).toBe(421);
  });

  test("the model list needs the key too and lists limits in Gemini's Model shape", async () => {
    expect((await fetch(`${strict.url}/v1beta/models`)).status).toBe(401);
    const list = await json(await fetch(`${strict.url}/v1beta/models`, { headers: { "x-goog-api-key": secret } }));
    expect(list.models).toContainEqual({
      name: "models/anth/claude-test",
      version: "switchyard",
      displayName: "anth/claude-test",
      description: "anth model via switchyard",
      inputTokenLimit: 200000,
      outputTokenLimit: 32000,
      supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
    });
    const one = await fetch(`${strict.url}/v1beta/models/anth/claude-test?key=${secret}`);
    expect((await json(one)).inputTokenLimit).toBe(200000);
    const missing = await fetch(`${strict.url}/v1beta/models/anth/none?key=${secret}`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.status).toBe("NOT_FOUND");
  });

  test("@google/genai's own models.list and models.get (GET /v1/models[/{model}] by default) get Gemini's shapes, keyed like its other calls", async () => {
    // the SDK sends these under /v1/models with x-goog-api-key: an OpenAI list read as no models at all
    const sdk = new GoogleGenAI({ apiKey: secret, httpOptions: { baseUrl: strict.url } });
    const names: string[] = [];
    for await (const m of await sdk.models.list()) names.push(m.name ?? "");
    expect(names).toContain("models/anth/claude-test");
    const one = await sdk.models.get({ model: "anth/claude-test" });
    expect(one).toMatchObject({ name: "models/anth/claude-test", inputTokenLimit: 200000, outputTokenLimit: 32000 });
    // a refused key is Gemini's 401, not OpenAI's error shape
    const wrong = new GoogleGenAI({ apiKey: "nope", httpOptions: { baseUrl: strict.url } });
    const err = await wrong.models.list().then(() => undefined, (e: { status?: number; message?: string }) => e);
    expect(err?.status).toBe(401);
    expect(JSON.parse(err!.message!).error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    const unknown = await fetch(`${strict.url}/v1/models/anth/none`, { headers: { "x-goog-api-key": secret } });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.status).toBe("NOT_FOUND");
    // OpenAI clients keep OpenAI's list at the same path
    const openai = await json(await fetch(`${strict.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } }));
    expect(openai.object).toBe("list");
    expect(openai.data.map((m: { id: string }) => m.id)).toContain("anth/claude-test");
  });
});
