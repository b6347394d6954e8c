/**
 * Codex after a reply that broke off once its signed thinking was done (seen with the real Codex
 * 0.171.0 in front of an Anthropic-compatible provider): Codex keeps the finished reasoning item and
 * sends it again when it retries, so the next request ends in reasoning only — built as it was, an
 * Anthropic request `[user, assistant: [thinking]]` with thinking enabled, which Anthropic takes as a
 * prefill to continue; over the WebSocket with default retries the copies piled up (11 identical
 * thinking blocks). Asked here, with the exact bodies the providers get: a last assistant turn of
 * reasoning only is not sent (a `dropped_thinking` warning says why, for each target), identical
 * reasoning items in a row go once (Anthropic, Gemini, Chat targets).
 *
 * The same for a Responses provider reached by a Chat, Anthropic or Gemini client whose history ends in
 * reasoning only (OpenAI refuses a reasoning item with no item after it): until 2026-12-07 the
 * Responses build sent `[user message, reasoning]`. A Responses client's own items go as it sent them.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const REASONING = "The user wants the file read first; call read_file on a.ts.";
const tools = [{ type: "function", name: "read_file", description: "Reads a file.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
const codexBody = (model: string, input: unknown[]) => ({ model, store: false, stream: true, include: ["reasoning.encrypted_content"], reasoning: { effort: "high", summary: "auto" }, tools, input });
const post = (body: unknown) => fetch(`${suite.gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const warningsOf = (res: Response) => JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;
const user = { type: "message", role: "user", content: [{ type: "input_text", text: "What is in a.ts?" }] };
const reasoning = (sig: string) => ({ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: REASONING }], encrypted_content: sig });
const call = { type: "function_call", call_id: "toolu_th1", name: "read_file", arguments: '{"path":"a.ts"}' };
const output = { type: "function_call_output", call_id: "toolu_th1", output: "export const foo = 1;" };
const tail = (why: string) =>
  `The conversation ended in an assistant turn holding only reasoning (a client re-sending the reasoning of a reply that broke off); it was not sent, as ${why}; the request ends at the turn before it.`;
const WHY = {
  anthropic: "Anthropic would take it as a prefill and continue it instead of answering",
  gemini: "Gemini would take it as a model turn to continue instead of answering",
  chat: "a Chat Completions assistant message carries reasoning (reasoning_content) only beside an answer or a tool call",
  responses: "the Responses API refuses a reasoning item with no item after it",
};

async function send(model: string, input: unknown[]) {
  suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
  const res = await post(codexBody(model, input));
  expect(res.status).toBe(200);
  await res.text();
  return { sent: suite.gw.fake.requests.at(-1)!.body as any, warnings: warningsOf(res) };
}

describe("Codex re-sends the reasoning of a cut reply", () => {
  test("Anthropic: a last turn of reasoning only (three copies) is not sent as a prefill, and said", async () => {
    const r = reasoning("sy|anthropic|SIGabc");
    const { sent, warnings } = await send("anth/claude-x", [user, r, r, r]);
    expect(sent.messages).toEqual([{ role: "user", content: [{ type: "text", text: "What is in a.ts?" }] }]);
    expect(sent.thinking.type).toBe("enabled");
    expect(warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.anthropic) });
  });

  test("Anthropic: identical reasoning items in a row before a call go once", async () => {
    const r = reasoning("sy|anthropic|SIGabc");
    const { sent, warnings } = await send("anth/claude-x", [user, r, r, call, output]);
    expect(sent.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "What is in a.ts?" }] },
      { role: "assistant", content: [{ type: "thinking", thinking: REASONING, signature: "SIGabc" }, { type: "tool_use", id: "toolu_th1", name: "read_file", input: { path: "a.ts" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_th1", content: "export const foo = 1;" }] },
    ]);
    expect(warnings.map((w) => w.code)).not.toContain("dropped_thinking");
  });

  test("Anthropic: a turn of reasoning only between two user turns (the user typed again after the cut) is not sent, and said", async () => {
    const r = reasoning("sy|anthropic|SIGabc");
    const again = { type: "message", role: "user", content: [{ type: "input_text", text: "Go on, please." }] };
    const { sent, warnings } = await send("anth/claude-x", [user, r, r, again]);
    expect(sent.messages).toEqual([{ role: "user", content: [{ type: "text", text: "What is in a.ts?" }, { type: "text", text: "Go on, please." }] }]);
    expect(sent.thinking.type).toBe("enabled");
    expect(warnings).toContainEqual({
      code: "dropped_thinking",
      message:
        "An assistant turn inside the conversation held only reasoning (a client re-sending the reasoning of a reply that broke off); not sent, as Anthropic documents no assistant turn of thinking alone; the turns around it are sent without it.",
    });
  });

  test("Gemini: a last model turn of signed thoughts only is not sent; repeats before a call go once", async () => {
    const r = reasoning("sy|gemini|R2VtU2ln");
    const first = await send("gem/gemini-x", [user, r, r]);
    expect(first.sent.contents).toEqual([{ role: "user", parts: [{ text: "What is in a.ts?" }] }]);
    expect(first.warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.gemini) });
    const second = await send("gem/gemini-x", [user, r, r, call, output]);
    expect(second.sent.contents[1].parts.filter((p: any) => p.thought === true)).toEqual([{ text: REASONING, thought: true, thoughtSignature: "R2VtU2ln" }]);
  });

  test("Chat: the reasoning-only tail is said; repeated reasoning is one reasoning_content", async () => {
    const r = reasoning("sy|anthropic|SIGabc");
    const first = await send("chat/gpt-test", [user, r, r]);
    expect(first.sent.messages).toEqual([{ role: "user", content: "What is in a.ts?" }]);
    expect(first.warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.chat) });
    const second = await send("chat/gpt-test", [user, r, r, call, output]);
    expect(second.sent.messages[1].reasoning_content).toBe(REASONING);
  });
});

/** OpenAI's encrypted reasoning state as a client of another format holds it (tagged, formats/hub.ts). */
const ENC = "gAAAAB-enc-1";
const SIGNED = `sy|openai|${ENC}`;

async function sendAt(path: string, body: unknown) {
  suite.gw.fake.handle((r) => simpleReply(r.format!, { text: "ok" }, r.stream));
  const res = await fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.text();
  return { sent: suite.gw.fake.requests.at(-1)!.body as any, warnings: warningsOf(res) };
}

const RESP_USER = { type: "message", role: "user", content: [{ type: "input_text", text: "What is in a.ts?" }] };
const RESP_REASONING = { type: "reasoning", summary: [{ type: "summary_text", text: REASONING }], encrypted_content: ENC };
const RESP_CALL = { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.ts"}' };
const RESP_OUTPUT = { type: "function_call_output", call_id: "call_1", output: "export const foo = 1;" };

describe("A Responses provider gets no reasoning item with nothing after it", () => {
  test("Chat client: an assistant message of reasoning_details only is not sent; repeats before a call go once", async () => {
    const detail = { type: "reasoning.text", text: REASONING, signature: SIGNED, index: 0 };
    const chat = (messages: unknown[]) => ({ model: "resp/o4", reasoning_effort: "high", messages });
    const first = await sendAt("/v1/chat/completions", chat([{ role: "user", content: "What is in a.ts?" }, { role: "assistant", content: null, reasoning_details: [detail, { ...detail, index: 1 }] }]));
    expect(first.sent).toEqual({ model: "o4", input: [RESP_USER], reasoning: { effort: "high", summary: "auto" }, store: false, include: ["reasoning.encrypted_content"], stream: false });
    expect(first.warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.responses) });
    const second = await sendAt(
      "/v1/chat/completions",
      chat([
        { role: "user", content: "What is in a.ts?" },
        { role: "assistant", content: null, reasoning_details: [detail, { ...detail, index: 1 }], tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "export const foo = 1;" },
      ]),
    );
    expect(second.sent.input).toEqual([RESP_USER, RESP_REASONING, RESP_CALL, RESP_OUTPUT]);
    expect(second.warnings.map((w) => w.code)).not.toContain("dropped_thinking");
  });

  test("Chat client: an assistant message of reasoning_details only between two user turns is not sent, and said", async () => {
    const detail = { type: "reasoning.text", text: REASONING, signature: SIGNED, index: 0 };
    const { sent, warnings } = await sendAt("/v1/chat/completions", {
      model: "resp/o4",
      reasoning_effort: "high",
      messages: [{ role: "user", content: "What is in a.ts?" }, { role: "assistant", content: null, reasoning_details: [detail] }, { role: "user", content: "Go on, please." }],
    });
    expect(sent.input).toEqual([RESP_USER, { type: "message", role: "user", content: [{ type: "input_text", text: "Go on, please." }] }]);
    expect(warnings).toContainEqual({
      code: "dropped_thinking",
      message:
        "An assistant turn inside the conversation held only reasoning (a client re-sending the reasoning of a reply that broke off); not sent, as the Responses API refuses a reasoning item not followed by its output; the turns around it are sent without it.",
    });
  });

  test("Anthropic client: a last assistant turn of signed thinking only is not sent", async () => {
    const { sent, warnings } = await sendAt("/v1/messages", {
      model: "resp/o4",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [
        { role: "user", content: "What is in a.ts?" },
        { role: "assistant", content: [{ type: "thinking", thinking: REASONING, signature: SIGNED }, { type: "thinking", thinking: REASONING, signature: SIGNED }] },
      ],
    });
    expect(sent).toEqual({ model: "o4", input: [RESP_USER], max_output_tokens: 4000, reasoning: { effort: "low", summary: "auto" }, store: false, include: ["reasoning.encrypted_content"], stream: false });
    expect(warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.responses) });
  });

  test("Gemini client: a last model turn of thoughts only is not sent", async () => {
    const { sent, warnings } = await sendAt("/v1beta/models/resp/o4:generateContent", {
      contents: [
        { role: "user", parts: [{ text: "What is in a.ts?" }] },
        { role: "model", parts: [{ text: REASONING, thought: true, thoughtSignature: SIGNED }] },
      ],
      generationConfig: { thinkingConfig: { thinkingBudget: 2000, includeThoughts: true } },
    });
    expect(sent).toEqual({ model: "o4", input: [RESP_USER], reasoning: { effort: "low", summary: "auto" }, store: false, include: ["reasoning.encrypted_content"], stream: false });
    expect(warnings).toContainEqual({ code: "dropped_thinking", message: tail(WHY.responses) });
  });

  test("Responses client (native lane): its items go as it sent them", async () => {
    const input = [RESP_USER, RESP_REASONING];
    const { sent, warnings } = await sendAt("/v1/responses", { model: "resp/o4", store: false, input });
    expect(sent.input).toEqual(input);
    expect(warnings.map((w) => w.code)).not.toContain("dropped_thinking");
  });
});
