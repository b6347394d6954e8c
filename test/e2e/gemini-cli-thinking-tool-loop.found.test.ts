/**
 * Found in a tryout with the real Gemini CLI 0.61.0 in front of an anthropic-compatible provider
 * (`gemini -p … --yolo`, `switchyard setup gemini --model anthc/…`, a thinkingBudget in
 * modelConfigs): the provider's signed thinking reaches the Gemini client as `thought: true` parts,
 * the signature on an empty thought part of its own. Gemini CLI keeps no thought part in its history:
 * on the tool loop's next turn it sent the model turn as the functionCall part alone, carrying
 * `thoughtSignature: "skip_thought_signature_validator"` (it fills that in when a call has none), so
 * the gateway found no thinking signed by this provider on the last tool-use turn and switched
 * thinking off ("dropped_thinking_config: The last tool-use turn has no thinking signed by this
 * provider; thinking was not enabled"). Every turn after a tool call then runs without thinking.
 *
 * This file replays that second turn as Gemini CLI sent it (thought parts dropped, the functionCall
 * parts as given, the placeholder on a call without a signature) and asks what the user would want:
 * thinking stays on and the provider gets its signed thinking back before the tool_use. It fails on
 * the code of 2026-12-07 (63730a88).
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
