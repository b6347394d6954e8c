/**
 * Reasoning kept across the turns of a tool loop on translated lanes, with the official SDKs through
 * the real gateway (REFERENCE §3: reasoning items go back with `encrypted_content`; §5 "keep signatures
 * round-trippable through formats that lack a slot").
 *
 * - Anthropic client → Responses provider: the fake answers like OpenAI, with `encrypted_content` on
 *   its reasoning items only when the request's `include` asks for `reasoning.encrypted_content`
 *   (recorded `openai-responses/reasoning-summary-encrypted-function-call.sse`, stripped otherwise).
 * - Chat client → Anthropic provider with `reasoning_effort`: the signed thinking reaches the app in
 *   `reasoning_details` (tagged), which the openai SDK keeps on the message; the app appends the
 *   assistant message as the SDK returned it plus the tool result, and the upstream gets the signed
 *   thinking block back with thinking on (recorded `anthropic-messages/thinking-signature.sse`'s
 *   thinking block, then a tool call).
 * - Chat client → Gemini provider (Gemini 3): the signed functionCall (recorded `gemini/function-call.sse`
 *   / `.json`) reaches the app with its signature in `reasoning_details` (tagged, with the call's id);
 *   the app appends the assistant message as the SDK returned it, and the upstream gets that signature
 *   back on the functionCall part instead of Google's placeholder.
 * - Anthropic Messages and Responses clients → the same Gemini provider: the signature comes as a
 *   signature-only thinking block / reasoning item just before the call (no slot on `tool_use` /
 *   `function_call`), naming the call's id, and goes back on the functionCall part the same way, also
 *   when the client reorders the parallel calls or drops the signed one (recorded
 *   `gemini/streamed-args-parallel.sse`); a signature that comes on a later chunk of a streamed call
 *   comes as the same block / item just after the call, and goes back on it too.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { DUMMY_THOUGHT_SIGNATURE } from "../../formats/gemini/index.ts";

const suite = gatewaySuite();

const RESPONSES_SSE = new TextDecoder().decode(await recordedBytes("openai-responses/reasoning-summary-encrypted-function-call.sse"));

/** Removes every `encrypted_content` member from the SSE's data lines (what OpenAI sends when not asked for it). */
function withoutEncrypted(sse: string): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== "encrypted_content") out[k] = strip(x);
      return out;
    }
    return v;
  };
  return sse
    .split("\n")
    .map((l) => (l.startsWith("data: {") ? "data: " + JSON.stringify(strip(JSON.parse(l.slice(6)))) : l))
    .join("\n");
}

/** The reasoning item's `encrypted_content` as its `output_item.done` event gives it. */
const ENCRYPTED: string = RESPONSES_SSE.split("\n")
  .filter((l) => l.startsWith("data: {"))
  .map((l) => JSON.parse(l.slice(6)))
  .find((e) => e.type === "response.output_item.done" && e.item.type === "reasoning").item.encrypted_content;

/** Like OpenAI: the reasoning's encrypted state only when `include` asks for it; later turns get a short text reply. */
function openaiLike(r: ReceivedRequest): FakeReply {
  if (r.body.input.some((i: any) => i.type === "function_call_output")) {
    return { json: { id: "resp_2", object: "response", status: "completed", model: "o4", output: [{ type: "message", id: "msg_2", role: "assistant", status: "completed", content: [{ type: "output_text", text: "19", annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } } };
  }
  const asked = Array.isArray(r.body.include) && r.body.include.includes("reasoning.encrypted_content");
  return { sse: asked ? RESPONSES_SSE : withoutEncrypted(RESPONSES_SSE) };
}

describe("Anthropic client → Responses provider, thinking enabled", () => {
  const tools = [{ name: "calculator", input_schema: { type: "object" as const, properties: {} } }];
  const params = { model: "resp/o4", max_tokens: 5000, thinking: { type: "enabled" as const, budget_tokens: 2000 }, tools };

  test("the upstream is asked for encrypted reasoning; the thinking comes back signed and goes back on the tool-result turn", async () => {
    suite.gw.fake.handle(openaiLike);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = await anthropic.messages.stream({ ...params, messages: [{ role: "user", content: "12+7" }] }).finalMessage();
    expect(suite.gw.fake.requests[0]!.body.include).toEqual(["reasoning.encrypted_content"]);
    const thinking = first.content.find((b) => b.type === "thinking") as { signature: string } | undefined;
    expect(thinking?.signature).toBe("sy|openai|" + ENCRYPTED);
    const call = first.content.find((b) => b.type === "tool_use") as { id: string };
    const second = await anthropic.messages
      .create({
        ...params,
        messages: [
          { role: "user", content: "12+7" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "19" }] },
        ],
      })
      .withResponse();
    const input = suite.gw.fake.requests.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input.filter((i) => i.type === "reasoning").map((i) => i.encrypted_content)).toEqual([ENCRYPTED]);
    expect(second.response.headers.get("x-switchyard-warning") ?? "").not.toContain("dropped_reasoning");
  });
});

const ANTHROPIC_SSE = new TextDecoder().decode(await recordedBytes("anthropic-messages/thinking-signature.sse"));
const ANTHROPIC_EVENTS = ANTHROPIC_SSE.split(/\n\n/)
  .filter((f) => f.includes("data: "))
  .map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)));
const THINKING_TEXT: string = ANTHROPIC_EVENTS.filter((e) => e.delta?.type === "thinking_delta").map((e) => e.delta.thinking).join("");
const SIGNATURE: string = ANTHROPIC_EVENTS.find((e) => e.delta?.type === "signature_delta").delta.signature;

/** The recorded reply's message start and thinking block (four text deltas, a signature), then a call to get_weather. */
function thinkingThenToolUse(): string {
  const ev = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const thinkingEnd = ANTHROPIC_EVENTS.findIndex((e) => e.type === "content_block_stop" && e.index === 0);
  return (
    ANTHROPIC_EVENTS.slice(0, thinkingEnd + 1).map(ev).join("") +
    ev({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01A", name: "get_weather", input: {} } }) +
    ev({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":"SF"}' } }) +
    ev({ type: "content_block_stop", index: 1 }) +
    ev({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 40 } }) +
    ev({ type: "message_stop" })
  );
}

/** Turn 1: thinking + tool_use (streamed or as JSON); later turns: a short text answer. */
function anthropicLoop(r: ReceivedRequest): FakeReply {
  const turn2 = (r.body.messages as Array<{ role: string }>).some((m) => m.role === "assistant");
  if (turn2) return simpleReply("anthropic-messages", { text: "sunny" }, r.stream);
  if (r.stream) return { sse: thinkingThenToolUse() };
  return {
    json: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "thinking", thinking: THINKING_TEXT, signature: SIGNATURE },
        { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "SF" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 40 },
    },
  };
}

describe("Chat client → Anthropic provider, reasoning_effort, a tool loop", () => {
  const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
  const MODEL = "anth/claude-sonnet-4-5";

  /** Turn 2 as an app writes it: the assistant message as the SDK returned it, then the tool result. */
  async function secondTurn(chat: OpenAI, assistant: OpenAI.Chat.ChatCompletionMessage) {
    const res = await chat.chat.completions
      .create({
        model: MODEL,
        reasoning_effort: "medium",
        tools,
        messages: [{ role: "user", content: "weather SF" }, assistant as OpenAI.Chat.ChatCompletionAssistantMessageParam, { role: "tool", tool_call_id: assistant.tool_calls![0]!.id, content: "20C" }],
      })
      .withResponse();
    const up = suite.gw.fake.requests.at(-1)!.body;
    return { up, warning: res.response.headers.get("x-switchyard-warning") ?? "" };
  }

  for (const stream of [true, false]) {
    test(`${stream ? "streamed (the SDK's stream helper)" : "JSON"}: turn 2's upstream body has the signed thinking block and thinking on, no dropped_thinking warning`, async () => {
      suite.gw.fake.handle(anthropicLoop);
      const chat = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
      const first = { model: MODEL, reasoning_effort: "medium" as const, tools, messages: [{ role: "user" as const, content: "weather SF" }] };
      const reply = stream ? await chat.chat.completions.stream(first).finalChatCompletion() : await chat.chat.completions.create(first);
      const assistant = reply.choices[0]!.message;
      expect((assistant as any).reasoning_details).toEqual([{ type: "reasoning.text", text: THINKING_TEXT, signature: "sy|anthropic|" + SIGNATURE, index: 0 }]);
      const { up, warning } = await secondTurn(chat, assistant);
      expect(up.thinking).toBeDefined();
      expect(up.thinking.type).not.toBe("disabled");
      expect(up.messages[1].content).toEqual([
        { type: "thinking", thinking: THINKING_TEXT, signature: SIGNATURE },
        { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "SF" } },
      ]);
      expect(warning).not.toContain("dropped_thinking");
    });
  }
});

describe("Chat client → Responses provider, reasoning_effort, a tool loop", () => {
  test("the encrypted reasoning reaches the app in reasoning_details and goes back as the reasoning item's encrypted_content", async () => {
    suite.gw.fake.handle(openaiLike);
    const chat = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const tools = [{ type: "function" as const, function: { name: "calculator", parameters: { type: "object", properties: {} } } }];
    const first = await chat.chat.completions.stream({ model: "resp/o4", reasoning_effort: "low", tools, messages: [{ role: "user", content: "12+7" }] }).finalChatCompletion();
    expect(suite.gw.fake.requests[0]!.body.include).toEqual(["reasoning.encrypted_content"]);
    const assistant = first.choices[0]!.message;
    const res = await chat.chat.completions
      .create({
        model: "resp/o4",
        reasoning_effort: "low",
        tools,
        messages: [{ role: "user", content: "12+7" }, assistant as OpenAI.Chat.ChatCompletionAssistantMessageParam, { role: "tool", tool_call_id: assistant.tool_calls![0]!.id, content: "19" }],
      })
      .withResponse();
    const input = suite.gw.fake.requests.at(-1)!.body.input as Array<Record<string, unknown>>;
    expect(input.filter((i) => i.type === "reasoning").map((i) => i.encrypted_content)).toEqual([ENCRYPTED]);
    expect(res.response.headers.get("x-switchyard-warning") ?? "").not.toContain("dropped_reasoning");
  });
});

const GEMINI_SSE = new TextDecoder().decode(await recordedBytes("gemini/function-call.sse"));
const GEMINI_JSON = JSON.parse(new TextDecoder().decode(await recordedBytes("gemini/function-call.json")));
const GEMINI_CHUNKS = GEMINI_SSE.split(/\r?\n\r?\n/)
  .filter((l) => l.startsWith("data: "))
  .map((l) => JSON.parse(l.slice(6)));

describe("Chat client → Gemini provider (Gemini 3), a tool loop", () => {
  const tools = [{ type: "function" as const, function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }];
  const MODEL = "gem/gemini-3-pro-preview";

  for (const stream of [true, false]) {
    const recorded = stream ? GEMINI_CHUNKS[0] : GEMINI_JSON;
    const signature: string = recorded.candidates[0].content.parts[0].thoughtSignature;
    test(`${stream ? "streamed (the SDK's stream helper)" : "JSON"}: the functionCall's signature reaches the app in reasoning_details and goes back on that functionCall part, not Google's placeholder`, async () => {
      suite.gw.fake.handle((r) => {
        const answered = (r.body.contents as Array<{ parts: Array<Record<string, unknown>> }>).some((c) => c.parts.some((p) => p.functionResponse));
        if (answered) return simpleReply("gemini", { text: "sunny" }, r.stream);
        return stream ? { sse: GEMINI_SSE } : { json: GEMINI_JSON };
      });
      const chat = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
      const first = { model: MODEL, tools, messages: [{ role: "user" as const, content: "weather in SF?" }] };
      const reply = stream ? await chat.chat.completions.stream(first).finalChatCompletion() : await chat.chat.completions.create(first);
      const assistant = reply.choices[0]!.message;
      const call = assistant.tool_calls![0]!;
      expect((assistant as any).reasoning_details).toEqual([{ type: "reasoning.encrypted", data: "sy|gemini|" + signature, id: call.id, format: "google-gemini-v1", index: 0 }]);
      const second = await chat.chat.completions.create({
        model: MODEL,
        tools,
        messages: [{ role: "user", content: "weather in SF?" }, assistant as OpenAI.Chat.ChatCompletionAssistantMessageParam, { role: "tool", tool_call_id: call.id, content: "20C" }],
      });
      expect(second.choices[0]!.message.content).toBe("sunny");
      const contents = suite.gw.fake.requests.at(-1)!.body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
      expect(contents[1]).toEqual({ role: "model", parts: [{ functionCall: { name: "weather", args: { location: "San Francisco" } }, thoughtSignature: signature }] });
    });
  }
});

describe("Anthropic Messages and Responses clients → Gemini provider (Gemini 3), a tool loop", () => {
  const MODEL = "gem/gemini-3-pro-preview";
  const geminiLoop = (stream: boolean) => (r: ReceivedRequest): FakeReply => {
    const answered = (r.body.contents as Array<{ parts: Array<Record<string, unknown>> }>).some((c) => c.parts.some((p) => p.functionResponse));
    if (answered) return simpleReply("gemini", { text: "sunny" }, r.stream);
    return stream ? { sse: GEMINI_SSE } : { json: GEMINI_JSON };
  };
  /** The model turn of the last upstream request: the call with its own signature, no placeholder, no empty part. */
  const expectSignedCall = (signature: string) =>
    expect((suite.gw.fake.requests.at(-1)!.body.contents as unknown[])[1]).toEqual({ role: "model", parts: [{ functionCall: { name: "weather", args: { location: "San Francisco" } }, thoughtSignature: signature }] });

  for (const stream of [true, false]) {
    const signature: string = (stream ? GEMINI_CHUNKS[0] : GEMINI_JSON).candidates[0].content.parts[0].thoughtSignature;
    const how = stream ? "streamed" : "JSON";

    test(`Messages, ${how}: a signature-only thinking block before the tool_use; sent back, the signature is on the functionCall part`, async () => {
      suite.gw.fake.handle(geminiLoop(stream));
      const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
      const tools = [{ name: "weather", input_schema: { type: "object" as const, properties: { location: { type: "string" } } } }];
      const first = { model: MODEL, max_tokens: 100, tools, messages: [{ role: "user" as const, content: "weather in SF?" }] };
      const reply = stream ? await anthropic.messages.stream(first).finalMessage() : await anthropic.messages.create(first);
      expect(reply.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
      const call = reply.content[1] as { id: string };
      expect(reply.content[0]).toEqual({ type: "thinking", thinking: "", signature: `sy|gemini-call|${call.id}|${signature}` });
      await anthropic.messages.create({
        ...first,
        messages: [...first.messages, { role: "assistant", content: reply.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "20C" }] }],
      });
      expectSignedCall(signature);
    });

    test(`Responses, ${how}: a reasoning item carrying the signature before the function_call; sent back, the signature is on the functionCall part`, async () => {
      suite.gw.fake.handle(geminiLoop(stream));
      const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
      const tools = [{ type: "function" as const, name: "weather", strict: false, parameters: { type: "object", properties: { location: { type: "string" } } } }];
      const first = { model: MODEL, input: "weather in SF?", tools, store: false };
      const reply = stream ? await openai.responses.stream(first).finalResponse() : await openai.responses.create(first);
      expect(reply.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
      const call = reply.output[1] as { call_id: string };
      expect((reply.output[0] as { encrypted_content?: string }).encrypted_content).toBe(`sy|gemini-call|${call.call_id}|${signature}`);
      await openai.responses.create({ ...first, input: [{ role: "user", content: "weather in SF?" }, ...(reply.output as any[]), { type: "function_call_output", call_id: call.call_id, output: "20C" }] });
      expectSignedCall(signature);
    });
  }
});

const PARALLEL_SSE = new TextDecoder().decode(await recordedBytes("gemini/streamed-args-parallel.sse"));

describe("Anthropic Messages and Responses clients → Gemini provider, parallel calls the client changes (recorded gemini/streamed-args-parallel.sse)", () => {
  const MODEL = "gem/gemini-3-pro-preview";
  /** Boston's signature: Gemini signs only the first of parallel calls. */
  const SIG: string = JSON.parse(PARALLEL_SSE.split(/\r?\n\r?\n/)[0]!.slice(6)).candidates[0].content.parts[0].thoughtSignature;
  const loop = (r: ReceivedRequest): FakeReply => {
    const answered = (r.body.contents as Array<{ parts: Array<Record<string, unknown>> }>).some((c) => c.parts.some((p) => p.functionResponse));
    return answered ? simpleReply("gemini", { text: "cold, mild" }, r.stream) : { sse: PARALLEL_SSE };
  };
  const modelTurn = () => (suite.gw.fake.requests.at(-1)!.body.contents as unknown[])[1];
  const call = (location: string, thoughtSignature: string) => ({ functionCall: { name: "getWeather", args: { location } }, thoughtSignature });
  const params = { type: "object" as const, properties: { location: { type: "string" } } };

  test("Messages: the calls sent back in another order, the thinking block first; Boston keeps its signature, San Francisco (now first) gets the placeholder", async () => {
    suite.gw.fake.handle(loop);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = { model: MODEL, max_tokens: 100, tools: [{ name: "getWeather", input_schema: params }], messages: [{ role: "user" as const, content: "weather in Boston and SF?" }] };
    const reply = await anthropic.messages.stream(first).finalMessage();
    expect(reply.content.map((b) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    const [thinking, boston, sf] = reply.content as [Anthropic.ThinkingBlock, Anthropic.ToolUseBlock, Anthropic.ToolUseBlock];
    expect(boston.input).toEqual({ location: "Boston" });
    await anthropic.messages.create({
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: [thinking, sf, boston] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: sf.id, content: "18C" }, { type: "tool_result", tool_use_id: boston.id, content: "5C" }] },
      ],
    });
    expect(modelTurn()).toEqual({ role: "model", parts: [call("San Francisco", DUMMY_THOUGHT_SIGNATURE), call("Boston", SIG)] });
  });

  test("Responses: the signed call dropped, its reasoning item kept; San Francisco does not get Boston's signature", async () => {
    suite.gw.fake.handle(loop);
    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const first = { model: MODEL, input: "weather in Boston and SF?", tools: [{ type: "function" as const, name: "getWeather", strict: false, parameters: params }], store: false };
    const reply = await openai.responses.stream(first).finalResponse();
    expect(reply.output.map((o) => o.type)).toEqual(["reasoning", "function_call", "function_call"]);
    const [reasoning, , sf] = reply.output as any[];
    await openai.responses.create({ ...first, input: [{ role: "user", content: "weather in Boston and SF?" }, reasoning, sf, { type: "function_call_output", call_id: sf.call_id, output: "18C" }] });
    expect(modelTurn()).toEqual({ role: "model", parts: [call("San Francisco", DUMMY_THOUGHT_SIGNATURE)] });
  });
});

describe("Anthropic Messages and Responses clients → Gemini provider, the signature on a later chunk of a streamed call", () => {
  // The recorded parallel calls with Boston's signature moved from the call's first chunk to its next
  // (Vertex `streamFunctionCallArguments` may sign a continuation piece): the Messages and Responses
  // encoders dropped it, and the next turn carried Google's placeholder on Boston's part.
  const MODEL = "gem/gemini-3-pro-preview";
  const chunks = PARALLEL_SSE.split(/\r?\n\r?\n/).filter((c) => c.startsWith("data: ")).map((c) => JSON.parse(c.slice(6)));
  const SIG: string = chunks[0].candidates[0].content.parts[0].thoughtSignature;
  delete chunks[0].candidates[0].content.parts[0].thoughtSignature;
  chunks[1].candidates[0].content.parts[0].thoughtSignature = SIG;
  const LATE_SSE = chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("");
  const loop = (r: ReceivedRequest): FakeReply => {
    const answered = (r.body.contents as Array<{ parts: Array<Record<string, unknown>> }>).some((c) => c.parts.some((p) => p.functionResponse));
    return answered ? simpleReply("gemini", { text: "cold, mild" }, r.stream) : { sse: LATE_SSE };
  };
  const SIGNED_TURN = {
    role: "model",
    parts: [{ functionCall: { name: "getWeather", args: { location: "Boston" } }, thoughtSignature: SIG }, { functionCall: { name: "getWeather", args: { location: "San Francisco" } } }],
  };
  const params = { type: "object" as const, properties: { location: { type: "string" } } };

  test("Messages, streamed: a signature-only thinking block after Boston's tool_use; sent back as received, the signature is on Boston's part", async () => {
    suite.gw.fake.handle(loop);
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const first = { model: MODEL, max_tokens: 100, tools: [{ name: "getWeather", input_schema: params }], messages: [{ role: "user" as const, content: "weather in Boston and SF?" }] };
    const reply = await anthropic.messages.stream(first).finalMessage();
    expect(reply.content.map((b) => b.type)).toEqual(["tool_use", "thinking", "tool_use"]);
    const [boston, , sf] = reply.content as [Anthropic.ToolUseBlock, Anthropic.ThinkingBlock, Anthropic.ToolUseBlock];
    expect(reply.content[1]).toEqual({ type: "thinking", thinking: "", signature: `sy|gemini-call|${boston.id}|${SIG}` });
    await anthropic.messages.create({
      ...first,
      messages: [
        ...first.messages,
        { role: "assistant", content: reply.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: boston.id, content: "5C" }, { type: "tool_result", tool_use_id: sf.id, content: "18C" }] },
      ],
    });
    expect((suite.gw.fake.requests.at(-1)!.body.contents as unknown[])[1]).toEqual(SIGNED_TURN);
  });

  test("Responses, streamed: a reasoning item with the signature after Boston's function_call; sent back as received, the signature is on Boston's part", async () => {
    suite.gw.fake.handle(loop);
    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const first = { model: MODEL, input: "weather in Boston and SF?", tools: [{ type: "function" as const, name: "getWeather", strict: false, parameters: params }], store: false };
    const reply = await openai.responses.stream(first).finalResponse();
    expect(reply.output.map((o) => o.type)).toEqual(["function_call", "reasoning", "function_call"]);
    const [boston, reasoning, sf] = reply.output as any[];
    expect(reasoning.encrypted_content).toBe(`sy|gemini-call|${boston.call_id}|${SIG}`);
    const outputs = [boston, sf].map((c, i) => ({ type: "function_call_output" as const, call_id: c.call_id, output: i === 0 ? "5C" : "18C" }));
    await openai.responses.create({ ...first, input: [{ role: "user", content: "weather in Boston and SF?" }, ...(reply.output as any[]), ...outputs] });
    expect((suite.gw.fake.requests.at(-1)!.body.contents as unknown[])[1]).toEqual(SIGNED_TURN);
  });
});
