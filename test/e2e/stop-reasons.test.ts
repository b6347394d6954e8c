/**
 * Stop reasons across every provider → client pair (SPEC F-6), table-driven through the real gateway
 * and read with the official SDKs: refusals and safety/recitation blocks, output-token limits, the
 * context window, Anthropic's pause_turn. A Responses client gets `incomplete` with the right reason
 * where a limit or a filter cut the reply, never `completed`; no finish is invented or softened into a
 * plain stop where the client's format has a word for what happened.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { GoogleGenAI } from "@google/genai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import type { FakeReply } from "../support/fake-upstream.ts";

const suite = gatewaySuite();

const TEXT = "Partial answer";

// ---- upstream replies ending with a given stop reason, one builder per provider format -------

function anthropicStop(reason: string): FakeReply {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  return {
    sse:
      ev("message_start", { type: "message_start", message: { id: "msg_s", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }) +
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
      ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: TEXT } }) +
      ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
      ev("message_delta", { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 3 } }) +
      ev("message_stop", { type: "message_stop" }),
  };
}

function chatStop(finish: string): FakeReply {
  const base = { id: "chatcmpl-s", object: "chat.completion.chunk", created: 1750000000, model: "m" };
  const chunk = (delta: unknown, f: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: f }] })}\n\n`;
  return {
    sse:
      chunk({ role: "assistant", content: "" }) +
      chunk({ content: TEXT }) +
      chunk({}, finish) +
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } })}\n\n` +
      "data: [DONE]\n\n",
  };
}

function responsesStop(incompleteReason?: string): FakeReply {
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const base = { id: "resp_s", object: "response", created_at: 1, model: "gpt-x", status: "in_progress", output: [] as unknown[] };
  const msg = { id: "msg_s", type: "message", role: "assistant", status: incompleteReason ? "incomplete" : "completed", content: [{ type: "output_text", text: TEXT, annotations: [] }] };
  const usage = { input_tokens: 5, output_tokens: 3, total_tokens: 8 };
  const end = incompleteReason
    ? ev("response.incomplete", { response: { ...base, status: "incomplete", incomplete_details: { reason: incompleteReason }, output: [msg], usage } })
    : ev("response.completed", { response: { ...base, status: "completed", output: [msg], usage } });
  return {
    sse:
      ev("response.created", { response: base }) +
      ev("response.output_item.added", { output_index: 0, item: { ...msg, status: "in_progress", content: [] } }) +
      ev("response.content_part.added", { output_index: 0, item_id: "msg_s", content_index: 0, part: { type: "output_text", text: "", annotations: [] } }) +
      ev("response.output_text.delta", { output_index: 0, item_id: "msg_s", content_index: 0, delta: TEXT }) +
      ev("response.output_text.done", { output_index: 0, item_id: "msg_s", content_index: 0, text: TEXT }) +
      ev("response.content_part.done", { output_index: 0, item_id: "msg_s", content_index: 0, part: msg.content[0] }) +
      ev("response.output_item.done", { output_index: 0, item: msg }) +
      end,
  };
}

function geminiStop(finishReason: string): FakeReply {
  const chunk = (c: unknown) => `data: ${JSON.stringify(c)}\r\n\r\n`;
  return {
    sse:
      chunk({ candidates: [{ content: { role: "model", parts: [{ text: TEXT }] }, index: 0 }], modelVersion: "gemini-x" }) +
      chunk({ candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason, index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 }, modelVersion: "gemini-x" }),
  };
}

/** Provider lanes: the provider model and how it says each reason. */
type Why = "refusal" | "max_tokens" | "context_window" | "pause_turn";
const PROVIDERS: Array<{ name: string; model: string; says: Array<[Why, string, FakeReply]> }> = [
  {
    name: "anthropic",
    model: "anth/claude-x",
    says: [
      ["refusal", "stop_reason refusal", anthropicStop("refusal")],
      ["max_tokens", "stop_reason max_tokens", anthropicStop("max_tokens")],
      ["context_window", "stop_reason model_context_window_exceeded", anthropicStop("model_context_window_exceeded")],
      ["pause_turn", "stop_reason pause_turn", anthropicStop("pause_turn")],
    ],
  },
  {
    name: "openai chat",
    model: "chat/qwen-x",
    says: [
      ["refusal", "finish_reason content_filter", chatStop("content_filter")],
      ["max_tokens", "finish_reason length", chatStop("length")],
    ],
  },
  {
    name: "openai responses",
    model: "resp/gpt-x",
    says: [
      ["refusal", "incomplete content_filter", responsesStop("content_filter")],
      ["max_tokens", "incomplete max_output_tokens", responsesStop("max_output_tokens")],
    ],
  },
  {
    name: "gemini",
    model: "gem/gemini-x",
    says: [
      ["refusal", "finishReason SAFETY", geminiStop("SAFETY")],
      ["refusal", "finishReason RECITATION", geminiStop("RECITATION")],
      ["refusal", "finishReason PROHIBITED_CONTENT", geminiStop("PROHIBITED_CONTENT")],
      ["max_tokens", "finishReason MAX_TOKENS", geminiStop("MAX_TOKENS")],
    ],
  },
];

/** What each client format must show for each reason (REFERENCE §5.1). */
const EXPECT: Record<Why, { anthropic: string; chat: string; responses: { status: string; details: { reason: string } | null }; gemini: string }> = {
  refusal: { anthropic: "refusal", chat: "content_filter", responses: { status: "incomplete", details: { reason: "content_filter" } }, gemini: "SAFETY" },
  max_tokens: { anthropic: "max_tokens", chat: "length", responses: { status: "incomplete", details: { reason: "max_output_tokens" } }, gemini: "MAX_TOKENS" },
  context_window: { anthropic: "model_context_window_exceeded", chat: "length", responses: { status: "incomplete", details: { reason: "max_output_tokens" } }, gemini: "MAX_TOKENS" },
  // A paused server-tool turn (the client sends it back to go on), as REFERENCE §5.1's table says:
  // `incomplete` for a Responses client, with reason `pause_turn` (the API's reasons, max_output_tokens
  // and content_filter, do not say it; null left the client no word why); Chat `stop`, Gemini `STOP`
  // (until 2026-12-07 `length` and `OTHER`).
  pause_turn: { anthropic: "pause_turn", chat: "stop", responses: { status: "incomplete", details: { reason: "pause_turn" } }, gemini: "STOP" },
};

const anthropic = () => new Anthropic({ apiKey: "x", baseURL: suite.gw.url, maxRetries: 0 });
const openai = () => new OpenAI({ apiKey: "x", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
const genai = () => new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: suite.gw.url } });

for (const p of PROVIDERS) {
  describe(`${p.name} provider`, () => {
    for (const [why, says, reply] of p.says) {
      const want = EXPECT[why];
      const replay = () => suite.gw.fake.handle(() => reply);

      test(`${says} → Anthropic client stop_reason ${want.anthropic} (stream)`, async () => {
        replay();
        const m = await anthropic().messages.stream({ model: p.model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }).finalMessage();
        expect(m.stop_reason as string).toBe(want.anthropic);
        expect(m.content).toEqual([expect.objectContaining({ type: "text", text: TEXT })]);
      });

      test(`${says} → Chat client finish_reason ${want.chat} (stream and whole)`, async () => {
        replay();
        const s = await openai().chat.completions.create({ model: p.model, messages: [{ role: "user", content: "hi" }], stream: true });
        const finishes: string[] = [];
        let text = "";
        for await (const c of s) {
          for (const ch of c.choices) {
            if (ch.finish_reason) finishes.push(ch.finish_reason);
            text += ch.delta.content ?? "";
          }
        }
        expect(finishes).toEqual([want.chat]);
        expect(text).toBe(TEXT);
        const whole = await openai().chat.completions.create({ model: p.model, messages: [{ role: "user", content: "hi" }] });
        expect(whole.choices.map((c) => c.finish_reason)).toEqual([want.chat as never]);
        expect(whole.choices[0]!.message.content).toBe(TEXT);
      });

      test(`${says} → Responses client ${want.responses.status} (${want.responses.details?.reason ?? "no reason"}), stream and whole`, async () => {
        replay();
        const events: any[] = [];
        for await (const ev of await openai().responses.create({ model: p.model, input: "hi", stream: true })) events.push(ev);
        const last = events.at(-1);
        expect(last.type).toBe(`response.${want.responses.status}`);
        expect(last.response.status).toBe(want.responses.status);
        expect(last.response.incomplete_details).toEqual(want.responses.details);
        expect(events.filter((e) => e.type === "response.completed")).toEqual([]);
        const whole = await openai().responses.create({ model: p.model, input: "hi" });
        expect(whole.status as string).toBe(want.responses.status);
        expect(whole.incomplete_details).toEqual(want.responses.details as never);
        expect(whole.output_text).toBe(TEXT);
      });

      // Gemini → Gemini is a native pair: the client reads the provider's own reason (RECITATION stays RECITATION).
      const geminiWant = p.name === "gemini" ? says.replace("finishReason ", "") : want.gemini;
      test(`${says} → Gemini client finishReason ${geminiWant} (stream and whole)`, async () => {
        replay();
        const finishes: string[] = [];
        let text = "";
        for await (const c of await genai().models.generateContentStream({ model: p.model, contents: "hi" })) {
          for (const cand of c.candidates ?? []) if (cand.finishReason) finishes.push(cand.finishReason);
          text += c.text ?? "";
        }
        expect(finishes).toEqual([geminiWant]);
        expect(text).toBe(TEXT);
        if (p.name === "gemini") return; // native: the fake's stream answers a JSON request (read through the hub)
        const whole = await genai().models.generateContent({ model: p.model, contents: "hi" });
        expect(whole.candidates?.map((c) => c.finishReason as string)).toEqual([geminiWant]);
        expect(whole.text).toBe(TEXT);
      });
    }
  });
}
