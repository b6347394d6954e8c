/**
 * Found in a tryout with the real Gemini CLI 0.61.0 in front of an anthropic-compatible provider
 * (`gemini -p … --yolo`, `switchyard setup gemini --model anthc/…`, a thinkingBudget in
 * modelConfigs): the provider's signed thinking reaches the Gemini client as `thought: true` parts,
 * the signature on an empty thought part of its own. Gemini CLI keeps no thought part in its history:
 * on the tool loop's next turn it sent the model turn as the functionCall part alone, carrying
 * `thoughtSignature: "skip_thought_signature_validator"` (it fills that in when a call has none), so
 * the gateway found no thinking signed by this provider on the last tool-use turn and switched
 * thinking off ("dropped_thinking_config"); a Chat thinking model got no `reasoning_content` back.
 *
 * Since 2026-12-07 the call itself carries that reasoning as its `thoughtSignature`
 * (formats/gemini/thought-carry.ts), which Gemini CLI keeps. These tests replay the second turn as
 * Gemini CLI sends it (thought parts dropped, the functionCall parts as given, the placeholder on a call
 * without a signature) and check what the provider gets. The first failed on the code of 2026-12-07
 * (63730a88).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** An Anthropic stream: signed thinking, then a call of run_shell_command. */
const THINK_THEN_CALL =
  ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I should run it." } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "QW50aHJvcGljU2ln" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "run_shell_command", input: {} } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"command":"echo hi"}' } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 1 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } }) +
  ev("message_stop", { type: "message_stop" });

const TOOLS = [{ functionDeclarations: [{ name: "run_shell_command", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } }] }];
const GEN = { thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 } };
const URL_PATH = "/v1beta/models/anth/claude-test:streamGenerateContent?alt=sse";

test("Gemini CLI's second tool-loop turn over an Anthropic provider keeps thinking on, with the signed thinking before the tool_use", async () => {
  gw.fake.enqueue({ sse: THINK_THEN_CALL });
  const user = { role: "user", parts: [{ text: "Run echo hi" }] };
  const res = await fetch(`${gw.url}${URL_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents: [user], tools: TOOLS, generationConfig: GEN }) });
  expect(res.status).toBe(200);
  const parts: any[] = (await res.text())
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .flatMap((e) => JSON.parse(e.slice(6)).candidates?.[0]?.content?.parts ?? []);
  expect(parts.some((p) => p.functionCall?.name === "run_shell_command")).toBe(true);
  // The first turn asked the provider for thinking.
  expect(gw.fake.requests.at(-1)!.body.thinking?.type).toBe("enabled");

  // What Gemini CLI 0.61.0 sends back: no thought parts; a functionCall without a signature gets the placeholder.
  const kept = parts.filter((p) => !p.thought && (p.functionCall || (typeof p.text === "string" && p.text !== "")));
  const modelTurn = { role: "model", parts: kept.map((p) => (p.functionCall && !p.thoughtSignature ? { ...p, thoughtSignature: "skip_thought_signature_validator" } : p)) };
  const call = kept.find((p) => p.functionCall)!.functionCall;
  const result = { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: "hi" } } }] };

  gw.fake.reset();
  const res2 = await fetch(`${gw.url}${URL_PATH}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents: [user, modelTurn, result], tools: TOOLS, generationConfig: GEN }) });
  expect(res2.status).toBe(200);
  await res2.text();
  const sent = gw.fake.requests.at(-1)!.body;
  expect(sent.thinking?.type).toBe("enabled");
  expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: "I should run it.", signature: "QW50aHJvcGljU2ln" });
});

/** What Gemini CLI 0.61.0 keeps of a streamed reply's parts, as the model turn of its next request. */
function cliModelTurn(parts: any[]) {
  const kept = parts.filter((p) => !p.thought && (p.functionCall || (typeof p.text === "string" && p.text !== "")));
  let first = true;
  const out = kept.map((p) => {
    if (!p.functionCall) return p;
    const q = first && !p.thoughtSignature ? { ...p, thoughtSignature: "skip_thought_signature_validator" } : p;
    first = false;
    return q;
  });
  return { role: "model", parts: out };
}

function sseParts(text: string): any[] {
  return text
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .flatMap((e) => JSON.parse(e.slice(6)).candidates?.[0]?.content?.parts ?? []);
}

const user = { role: "user", parts: [{ text: "Run echo hi" }] };

async function turn(path: string, contents: unknown[]): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents, tools: TOOLS, generationConfig: GEN }) });
}

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "deepseek-reasoner", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

test("a Chat thinking provider (DeepSeek style) gets its reasoning_content back on Gemini CLI's next tool-loop turn", async () => {
  gw.fake.reset();
  gw.fake.enqueue({
    sse:
      chunk({ role: "assistant", reasoning_content: "Let me " }) +
      chunk({ reasoning_content: "run it." }) +
      chunk({ tool_calls: [{ index: 0, id: "call_ds1", type: "function", function: { name: "run_shell_command", arguments: '{"command":"echo hi"}' } }] }) +
      chunk({}, "tool_calls") +
      "data: [DONE]\n\n",
  });
  const path = "/v1beta/models/chat/deepseek-reasoner:streamGenerateContent?alt=sse";
  const res = await turn(path, [user]);
  expect(res.status).toBe(200);
  const parts = sseParts(await res.text());
  expect(parts.filter((p) => p.thought).map((p) => p.text).join("")).toBe("Let me run it.");
  const modelTurn = cliModelTurn(parts);
  expect(modelTurn.parts).toHaveLength(1);
  expect(modelTurn.parts[0].thoughtSignature).toStartWith("sy|thoughts|");
  const call = modelTurn.parts[0].functionCall;
  const result = { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: "hi" } } }] };

  gw.fake.reset();
  gw.fake.enqueue({ sse: chunk({ role: "assistant", content: "done" }) + chunk({}, "stop") + "data: [DONE]\n\n" });
  const res2 = await turn(path, [user, modelTurn, result]);
  expect(res2.status).toBe(200);
  await res2.text();
  const sent = gw.fake.requests.at(-1)!.body;
  const assistant = sent.messages.find((m: any) => m.role === "assistant");
  expect(assistant.reasoning_content).toBe("Let me run it.");
  expect(assistant.tool_calls[0].function.name).toBe("run_shell_command");
});

test("non-streamed: the call of a generateContent reply carries the signed thinking, and the next turn keeps thinking on", async () => {
  gw.fake.reset();
  gw.fake.enqueue({
    json: {
      id: "msg_2", type: "message", role: "assistant", model: "claude-test", stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 9 },
      content: [
        { type: "thinking", thinking: "Two calls.", signature: "U2lnMg==" },
        { type: "redacted_thinking", data: "UmVkYWN0ZWQ=" },
        { type: "text", text: "Running both." },
        { type: "tool_use", id: "toolu_a", name: "run_shell_command", input: { command: "echo a" } },
        { type: "tool_use", id: "toolu_b", name: "run_shell_command", input: { command: "echo b" } },
      ],
    },
  });
  const path = "/v1beta/models/anth/claude-test:generateContent";
  const res = await turn(path, [user]);
  expect(res.status).toBe(200);
  const parts: any[] = ((await res.json()) as any).candidates[0].content.parts;
  const calls = parts.filter((p) => p.functionCall);
  expect(calls).toHaveLength(2);
  expect(calls[0].thoughtSignature).toStartWith("sy|thoughts|");
  // Only the first call of the step carries it (the second has no reasoning before it).
  expect(calls[1].thoughtSignature).toBeUndefined();
  const modelTurn = cliModelTurn(parts);
  const result = { role: "user", parts: calls.map((p) => ({ functionResponse: { id: p.functionCall.id, name: p.functionCall.name, response: { output: "ok" } } })) };

  gw.fake.reset();
  const res2 = await turn(URL_PATH, [user, modelTurn, result]);
  expect(res2.status).toBe(200);
  expect(res2.headers.get("x-switchyard-warning") ?? "").not.toContain("dropped_thinking_config");
  await res2.text();
  const sent = gw.fake.requests.at(-1)!.body;
  expect(sent.thinking?.type).toBe("enabled");
  expect(sent.messages[1].content.map((b: any) => b.type)).toEqual(["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]);
  expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: "Two calls.", signature: "U2lnMg==" });
  expect(sent.messages[1].content[1]).toEqual({ type: "redacted_thinking", data: "UmVkYWN0ZWQ=" });
});

test("a client that keeps the thought parts as well gets the thinking once, not twice", async () => {
  gw.fake.reset();
  gw.fake.enqueue({ sse: THINK_THEN_CALL });
  const res = await turn(URL_PATH, [user]);
  const parts = sseParts(await res.text());
  // Everything sent back as received (a Gemini SDK app that appends the reply's content).
  const modelTurn = { role: "model", parts };
  const call = parts.find((p) => p.functionCall).functionCall;
  const result = { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: "hi" } } }] };
  gw.fake.reset();
  const res2 = await turn(URL_PATH, [user, modelTurn, result]);
  expect(res2.status).toBe(200);
  await res2.text();
  const sent = gw.fake.requests.at(-1)!.body;
  expect(sent.thinking?.type).toBe("enabled");
  expect(sent.messages[1].content).toEqual([
    { type: "thinking", thinking: "I should run it.", signature: "QW50aHJvcGljU2ln" },
    { type: "tool_use", id: expect.any(String), name: "run_shell_command", input: { command: "echo hi" } },
  ]);
});

test("reasoning past the bound is not carried: the call has no signature and the next turn goes without thinking, as before", async () => {
  const long = "x".repeat(120 * 1024);
  gw.fake.reset();
  gw.fake.enqueue({ sse: THINK_THEN_CALL.replace("I should run it.", long) });
  const res = await turn(URL_PATH, [user]);
  const parts = sseParts(await res.text());
  expect(parts.filter((p) => p.thought).map((p) => p.text).join("")).toBe(long);
  const fc = parts.find((p) => p.functionCall);
  expect(fc.thoughtSignature).toBeUndefined();
  const modelTurn = cliModelTurn(parts);
  const result = { role: "user", parts: [{ functionResponse: { id: fc.functionCall.id, name: "run_shell_command", response: { output: "hi" } } }] };
  gw.fake.reset();
  const res2 = await turn(URL_PATH, [user, modelTurn, result]);
  expect(res2.status).toBe(200);
  expect(res2.headers.get("x-switchyard-warning") ?? "").toContain("dropped_thinking_config");
  await res2.text();
  expect(gw.fake.requests.at(-1)!.body.thinking).toBeUndefined();
});
