/**
 * Reasoning across formats through the real gateway (SPEC F-2, F-8), read with the official SDKs:
 * a thinking model's reasoning reaches each client in that client's reasoning slot and never as
 * visible text; on the next turn of a tool-call loop it goes back to the provider in the form that
 * provider accepts (Chat `reasoning_content` for OpenAI-compatible thinking models such as DeepSeek,
 * Kimi, GLM and Qwen); opaque state (Anthropic signatures, Responses encrypted reasoning) goes back only
 * to the family that issued it, and what was dropped is in `X-Switchyard-Warning` and the route trace.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { simpleReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const REASONING = "The user wants the file read first; call read_file on a.ts.";
const READ_TOOL = { name: "read_file", description: "Reads a file.", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };

/** A DeepSeek-style Chat stream: reasoning_content deltas, then one tool call. */
function deepseekToolCallSse(): string {
  const base = { id: "chatcmpl-ds1", object: "chat.completion.chunk", created: 1750000000, model: "deepseek-reasoner" };
  const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let out = chunk({ role: "assistant", content: null, reasoning_content: "" });
  for (const piece of REASONING.split(/(?<= )/)) out += chunk({ reasoning_content: piece });
  out += chunk({ tool_calls: [{ index: 0, id: "call_ds_1", type: "function", function: { name: "read_file", arguments: "" } }] });
  out += chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":"a.ts"}' } }] });
  out += chunk({}, "tool_calls");
  out += `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 12 } } })}\n\n`;
  return out + "data: [DONE]\n\n";
}

const lastAssistantChat = (r: ReceivedRequest) => (r.body.messages as any[]).filter((m) => m.role === "assistant").at(-1);
const warningsOf = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;
async function traceWarnings(routeId: string | null) {
  const t = await suite.gw.app.store.getTrace(routeId!);
  return (t?.warnings ?? []) as Array<{ code: string; message: string }>;
}

describe("a DeepSeek-style Chat thinking model in a tool-call loop", () => {
  test("Claude Code (Anthropic SDK): reasoning arrives as a thinking block, never text; the next turn sends it back as reasoning_content", async () => {
    suite.gw.fake.handle((r) => ({ sse: deepseekToolCallSse() }));
    const client = new Anthropic({ apiKey: "x", baseURL: suite.gw.url, maxRetries: 0 });
    const first = await client.messages.stream({ model: "chat/deepseek-reasoner", max_tokens: 500, tools: [READ_TOOL] as never, messages: [{ role: "user", content: "What is in a.ts?" }] }).finalMessage();
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    expect((first.content[0] as any).thinking).toBe(REASONING);
    expect(first.stop_reason).toBe("tool_use");
    expect(JSON.stringify(first.content.filter((b) => b.type === "text"))).not.toContain("read_file on");

    suite.gw.fake.reset();
    suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "It exports foo." }, r.stream));
    const second = await client.messages.create({
      model: "chat/deepseek-reasoner",
      max_tokens: 500,
      tools: [READ_TOOL] as never,
      messages: [
        { role: "user", content: "What is in a.ts?" },
        { role: "assistant", content: first.content as never },
        { role: "user", content: [{ type: "tool_result", tool_use_id: (first.content[1] as any).id, content: "export const foo = 1;" }] },
      ],
    });
    expect((second.content[0] as any).text).toBe("It exports foo.");
    const sent = lastAssistantChat(suite.gw.fake.requests[0]);
    expect(sent.reasoning_content).toBe(REASONING);
    expect(sent.content ?? "").not.toContain(REASONING);
    expect(sent.tool_calls[0].function).toEqual({ name: "read_file", arguments: '{"path":"a.ts"}' });
  });

  test("Codex (OpenAI SDK, Responses): reasoning arrives as a reasoning item, never output_text; replayed as reasoning_content", async () => {
    suite.gw.fake.handle(() => ({ sse: deepseekToolCallSse() }));
    const client = new OpenAI({ apiKey: "x", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const tools = [{ type: "function", name: "read_file", description: "Reads a file.", strict: false, parameters: READ_TOOL.input_schema }] as never;
    const stream = client.responses.stream({ model: "chat/deepseek-reasoner", input: "What is in a.ts?", tools, store: false, include: ["reasoning.encrypted_content"] });
    for await (const _ of stream) {
      /* drain */
    }
    const first = await stream.finalResponse();
    expect(first.output.map((o) => o.type)).toEqual(["reasoning", "function_call"]);
    expect(first.output_text).toBe("");
    const reasoningText = JSON.stringify(first.output[0]);
    expect(reasoningText).toContain("call read_file on a.ts");

    suite.gw.fake.reset();
    suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "It exports foo." }, r.stream));
    const fc = first.output[1] as any;
    const second = await client.responses.create({
      model: "chat/deepseek-reasoner",
      store: false,
      tools,
      input: [
        { role: "user", content: "What is in a.ts?" },
        ...(first.output as any[]),
        { type: "function_call_output", call_id: fc.call_id, output: "export const foo = 1;" },
      ] as never,
    });
    expect(second.output_text).toBe("It exports foo.");
    const sent = lastAssistantChat(suite.gw.fake.requests[0]);
    expect(sent.reasoning_content).toBe(REASONING);
    expect(sent.tool_calls[0].function.name).toBe("read_file");
  });
});

describe("opaque reasoning state goes back only to its family (F-8)", () => {
  const signedHistory = (signature: string) => [
    { role: "user", content: "What is in a.ts?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: REASONING, signature },
        { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.ts" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "export const foo = 1;" }] },
  ];

  test("Anthropic signature → the anthropic provider: the thinking block goes back whole, signature included", async () => {
    suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 200, tools: [READ_TOOL], messages: signedHistory("EqRealAnthropicSignature==") }),
    });
    expect(res.status).toBe(200);
    const blocks = suite.gw.fake.requests[0].body.messages[1].content;
    expect(blocks[0]).toEqual({ type: "thinking", thinking: REASONING, signature: "EqRealAnthropicSignature==" });
  });

  for (const [lane, model] of [
    ["a Responses provider (openai family)", "resp/gpt-x"],
    ["an Anthropic-compatible provider of another family (GLM)", "anthc/glm-x"],
    ["a Gemini provider", "gem/gemini-x"],
  ] as const) {
    test(`Anthropic signature → ${lane}: stripped, never sent as text, reported in the header and the trace`, async () => {
      suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
      const res = await fetch(`${suite.gw.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, max_tokens: 200, tools: [READ_TOOL], messages: signedHistory("EqRealAnthropicSignature==") }),
      });
      expect(res.status).toBe(200);
      const body = JSON.stringify(suite.gw.fake.requests[0].body);
      expect(body).not.toContain("EqRealAnthropicSignature==");
      // Never as visible text: no text part or message content carries the reasoning.
      const texts = JSON.stringify(suite.gw.fake.requests[0].body).match(/"(?:text|content)":"[^"]*read_file on a\.ts[^"]*"/g) ?? [];
      expect(texts).toEqual([]);
      const w = warningsOf(res);
      // Through the hub the signature is stripped; the same-format tidy (Anthropic → anthropic-compatible) drops the block.
      expect(w.filter((x) => x.code === "stripped_reasoning_state" || x.code === "dropped_thinking").length).toBeGreaterThanOrEqual(1);
      expect(await traceWarnings(res.headers.get("x-switchyard-route-id"))).toEqual(w);
    });
  }

  test("Responses encrypted reasoning → an Anthropic provider: stripped with a warning, never sent", async () => {
    suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "anth/claude-x",
        store: false,
        input: [
          { role: "user", content: "What is in a.ts?" },
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Read it first." }], encrypted_content: "gAAAAopaque-openai-state" },
          { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' },
          { type: "function_call_output", call_id: "call_1", output: "export const foo = 1;" },
        ],
        tools: [{ type: "function", name: "read_file", parameters: READ_TOOL.input_schema }],
      }),
    });
    expect(res.status).toBe(200);
    const body = JSON.stringify(suite.gw.fake.requests[0].body);
    expect(body).not.toContain("gAAAAopaque-openai-state");
    expect(warningsOf(res)).toContainEqual({ code: "stripped_reasoning_state", message: expect.stringContaining("Removed reasoning state issued by openai") });
    expect(await traceWarnings(res.headers.get("x-switchyard-route-id"))).toEqual(warningsOf(res));
  });
});

describe("Codex (Responses client) on an Anthropic provider with thinking, in a tool-call loop", () => {
  const SIG = "EqSignedByAnthropic==";
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  /** Anthropic's reply with thinking on: a signed thinking block, then a tool call. */
  const thinkingThenToolUse = () =>
    ev("message_start", { type: "message_start", message: { id: "msg_th1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }) +
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: REASONING } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: SIG } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
    ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_th1", name: "read_file", input: {} } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"path":"a.ts"}' } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
    ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 20 } }) +
    ev("message_stop", { type: "message_stop" });
  const tools = [{ type: "function", name: "read_file", parameters: READ_TOOL.input_schema }];
  /** A Codex request: store false, encrypted reasoning asked for, effort high. */
  const codexBody = (model: string, input: unknown[]) => ({ model, store: false, stream: true, include: ["reasoning.encrypted_content"], reasoning: { effort: "high", summary: "auto" }, tools, input });
  const post = (body: unknown) => fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  /** The output items of a Responses stream's `response.output_item.done` events. */
  async function doneItems(res: Response): Promise<any[]> {
    const text = await res.text();
    return text
      .split("\n\n")
      .map((e) => e.split("\n").find((l) => l.startsWith("data: ")))
      .filter((d): d is string => d !== undefined)
      .map((d) => JSON.parse(d.slice(6)))
      .filter((e) => e.type === "response.output_item.done")
      .map((e) => e.item);
  }

  test("the signed thinking reaches Codex as encrypted reasoning and goes back to Anthropic whole, so thinking stays on for the next turn", async () => {
    suite.gw.fake.handle((r) => (r.format === "anthropic-messages" && !(r.body.messages as any[]).some((m) => Array.isArray(m.content) && m.content.some((b: any) => b.type === "tool_result")) ? { sse: thinkingThenToolUse() } : simpleReply(r.format!, { text: "foo is 1" }, r.stream)));
    const user = { type: "message", role: "user", content: [{ type: "input_text", text: "What is in a.ts?" }] };
    const first = await post(codexBody("anth/claude-x", [user]));
    expect(first.status).toBe(200);
    const items = await doneItems(first);
    const reasoning = items.find((i) => i.type === "reasoning");
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: REASONING }]);
    expect(reasoning.encrypted_content).toBe(`sy|anthropic|${SIG}`);
    const call = items.find((i) => i.type === "function_call");
    expect(suite.gw.fake.requests[0].body.thinking?.type).toBe("enabled");

    // Codex's next turn: its history (the items as it kept them) and the tool's output.
    const second = await post(codexBody("anth/claude-x", [user, reasoning, call, { type: "function_call_output", call_id: call.call_id, output: "export const foo = 1;" }]));
    expect(second.status).toBe(200);
    const sent = suite.gw.fake.requests[1].body;
    const assistant = (sent.messages as any[]).find((m) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: REASONING, signature: SIG });
    expect(assistant.content[1]).toMatchObject({ type: "tool_use", name: "read_file", input: { path: "a.ts" } });
    expect(sent.thinking?.type).toBe("enabled");
    expect(warningsOf(second).map((w) => w.code)).not.toContain("dropped_thinking_config");
    await second.text();
  });

  test("the tagged state is never sent to a Responses provider: the item is dropped with a warning", async () => {
    suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
    const res = await post(
      codexBody("resp/gpt-x", [
        { type: "message", role: "user", content: [{ type: "input_text", text: "What is in a.ts?" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: REASONING }], encrypted_content: `sy|anthropic|${SIG}` },
        { type: "function_call", call_id: "toolu_th1", name: "read_file", arguments: '{"path":"a.ts"}' },
        { type: "function_call_output", call_id: "toolu_th1", output: "export const foo = 1;" },
      ]),
    );
    expect(res.status).toBe(200);
    await res.text();
    const raw = suite.gw.fake.requests[0].raw;
    expect(raw).not.toContain(SIG);
    expect(raw).not.toContain("sy|");
    expect(warningsOf(res).map((w) => w.code)).toContain("stripped_signature");
  });
});
