/**
 * An upstream that answers a stream request with JSON (README "Not done yet" until this was fixed:
 * the replay went through the hub, which dropped what it has no slot for without a word). A native
 * Gemini or Chat client now gets the reply as its own format's stream, every part kept (codec
 * `replayAsStream`: Gemini images and code-execution parts, Chat `audio`); a reply written from the hub
 * (the other native replays, and translated lanes) names what it left out in `X-Switchyard-Warning`
 * and the route trace (`reply_content_dropped`, SPEC F-2): Messages server-tool blocks, Responses
 * hosted tools' items.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
const warnings = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as { code: string; message: string }[];
/** The data of each SSE event in a body. */
const events = (text: string) =>
  text
    .trimEnd()
    .split("\n\n")
    .map((e) => e.split("\n").find((l) => l.startsWith("data: "))!.slice(6));

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const geminiReply = {
  candidates: [
    {
      content: { role: "model", parts: [{ text: "Here is the picture:" }, { inlineData: { mimeType: "image/png", data: PNG } }, { executableCode: { language: "PYTHON", code: "print(1)" } }] },
      finishReason: "STOP",
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 },
  modelVersion: "gemini-x",
};

describe("a native streaming client whose upstream answered with JSON", () => {
  test("Gemini: the reply as one chunk, its image and code-execution parts kept, no warning", async () => {
    suite.gw.fake.enqueue({ json: geminiReply });
    const res = await post("/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "draw" }] }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(events(await res.text()).map((d) => JSON.parse(d))).toEqual([geminiReply]);
    expect(warnings(res)).toEqual([]);
  });

  test("Gemini: a JSON array of chunks (streamGenerateContent without alt=sse) as one event each", async () => {
    const first = { candidates: [{ content: { role: "model", parts: [{ text: "one " }] }, index: 0 }], modelVersion: "gemini-x" };
    suite.gw.fake.enqueue({ json: [first, geminiReply] });
    const res = await post("/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "draw" }] }] });
    expect(res.status).toBe(200);
    expect(events(await res.text()).map((d) => JSON.parse(d))).toEqual([first, geminiReply]);
  });

  test("Chat: the reply as one chunk, its audio kept, message as delta, tool calls with their index, then [DONE]", async () => {
    const message = {
      role: "assistant",
      content: null,
      audio: { id: "audio_1", data: "UklGRg==", transcript: "Hello.", expires_at: 1750000000 },
      tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
    };
    const reply = { id: "chatcmpl-1", object: "chat.completion", created: 1750000000, model: "gpt-x", choices: [{ index: 0, message, finish_reason: "tool_calls", logprobs: null }] };
    suite.gw.fake.enqueue({ json: reply });
    const res = await post("/v1/chat/completions", { model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const data = events(await res.text());
    expect(data).toHaveLength(2);
    expect(JSON.parse(data[0])).toEqual({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1750000000,
      model: "gpt-x",
      choices: [{ index: 0, delta: { ...message, tool_calls: [{ index: 0, ...message.tool_calls[0] }] }, finish_reason: "tool_calls", logprobs: null }],
    });
    expect(data[1]).toBe("[DONE]");
    expect(warnings(res)).toEqual([]);
  });

  test("Messages: the replay through the hub keeps the text and names the server-tool blocks it left out", async () => {
    const reply = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-x",
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "oslo weather" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "It is sunny." },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 7 },
    };
    suite.gw.fake.enqueue({ json: reply });
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "weather?" }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"text":"It is sunny."');
    const message = "The reply of upstream anth held server_tool_use block, web_search_tool_result block, which this reply cannot carry (the gateway's common form has no place for it); left out.";
    expect(warnings(res)).toEqual([{ code: "reply_content_dropped", message }]);
    const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.warnings).toContainEqual({ code: "reply_content_dropped", message });
  });

  test("Responses: the replay names the hosted tool's item it left out", async () => {
    const reply = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-x",
      output: [
        { id: "ig_1", type: "image_generation_call", status: "completed", result: PNG },
        { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Drawn.", annotations: [] }] },
      ],
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
    };
    suite.gw.fake.enqueue({ json: reply });
    const res = await post("/v1/responses", { model: "resp/gpt-x", stream: true, input: "draw" });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"delta":"Drawn."');
    expect(warnings(res).map((w) => w.message)).toEqual([
      "The reply of upstream resp held image_generation_call item, which this reply cannot carry (the gateway's common form has no place for it); left out.",
    ]);
  });
});

test("a translated JSON reply (Chat client, Gemini provider) names the parts it left out too", async () => {
  suite.gw.fake.enqueue({ json: geminiReply });
  const res = await post("/v1/chat/completions", { model: "gem/gemini-x", messages: [{ role: "user", content: "draw" }] });
  expect(res.status).toBe(200);
  expect(((await res.json()) as any).choices[0].message.content).toBe("Here is the picture:");
  expect(warnings(res).map((w) => w.message)).toEqual([
    "The reply of upstream gem held inlineData part, executableCode part, which this reply cannot carry (the gateway's common form has no place for it); left out.",
  ]);
});
