/**
 * Token log probabilities across formats (README "Not done yet", 2026-12-02): the request switch and
 * count reach every target that has them (Chat `logprobs` / `top_logprobs`, Responses `include` +
 * `top_logprobs`, Gemini `responseLogprobs` / `logprobs`; Anthropic none, warned), and the per-token
 * values come back in the client's own shape, JSON and streamed, with the exact values reassembled.
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import { accumulate, responseToEvents } from "../../formats/accumulate.ts";
import { EventNormalizer, normalizeEvents } from "../../formats/normalize.ts";
import type { BuildTarget, ProviderKind } from "../../formats/codec.ts";
import type { HubEvent, HubRequest, WireFormat } from "../../formats/hub.ts";
import { sseEvents } from "../support/client-reply.ts";

const FAMILY: Partial<Record<ProviderKind, BuildTarget["family"]>> = { openai: "openai", "openai-responses": "openai", anthropic: "anthropic", gemini: "gemini" };

function build(from: WireFormat, body: Record<string, unknown>, to: WireFormat, kind: ProviderKind) {
  const hub = codecFor(from).parseRequest!(body);
  const target: BuildTarget = { model: "up-model", kind, family: FAMILY[kind] ?? "provider:x", stream: false };
  return codecFor(to).buildRequest({ ...hub, model: "up-model", stream: false }, target);
}

/** Upstream SSE text of `up` → the client's SSE text in `client` (decode, normalize, encode), as the pipeline does. */
function streamThrough(up: WireFormat, sse: string, client: WireFormat, request?: HubRequest): string {
  let out = "";
  const enc = codecFor(client).createEncoder!({ model: "client-model", request, newId: (p) => p + "x1", now: () => 0 }, (t) => (out += t));
  const norm = new EventNormalizer((e) => enc.event(e));
  const dec = codecFor(up).createDecoder({ family: up === "gemini" ? "gemini" : "openai" }, (e) => norm.event(e));
  dec.push(new TextEncoder().encode(sse));
  dec.end();
  norm.end();
  enc.end();
  return out;
}

/** Upstream SSE → the hub events the accumulating (JSON-client) path reads. */
function streamEvents(up: WireFormat, sse: string): HubEvent[] {
  const events: HubEvent[] = [];
  const dec = codecFor(up).createDecoder({ family: "openai" }, (e) => events.push(e));
  dec.push(new TextEncoder().encode(sse));
  dec.end();
  return normalizeEvents(events);
}

/** Upstream JSON body of `up` → the JSON body a `client` client gets. */
function jsonThrough(up: WireFormat, body: unknown, client: WireFormat): any {
  const resp = codecFor(up).decodeResponse(body, { family: up === "gemini" ? "gemini" : "openai" });
  return codecFor(client).encodeResponse!(resp, { model: "client-model", newId: (p) => p + "x1", now: () => 0 });
}

// The values every direction must carry exactly: two tokens, the first with two alternatives.
const TOKENS = [
  { token: "Hel", logprob: -0.25, top: [{ token: "Hel", logprob: -0.25 }, { token: "Hi", logprob: -1.5 }] },
  { token: "lo", logprob: -0.0625, top: [{ token: "lo", logprob: -0.0625 }] },
];
const utf8 = (s: string) => Array.from(new TextEncoder().encode(s));
const chatTokens = TOKENS.map((t) => ({ token: t.token, logprob: t.logprob, bytes: utf8(t.token), top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: utf8(a.token) })) }));
const responsesDeltaTokens = TOKENS.map((t) => ({ token: t.token, logprob: t.logprob, top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob })) }));
const geminiResult = (ts: typeof TOKENS) => ({
  topCandidates: ts.map((t) => ({ candidates: t.top.map((a) => ({ token: a.token, logProbability: a.logprob })) })),
  chosenCandidates: ts.map((t) => ({ token: t.token, logProbability: t.logprob })),
});
/** Chat tokens as a client reads them when the source had no bytes (Gemini). */
const chatTokensNoBytes = TOKENS.map((t) => ({ token: t.token, logprob: t.logprob, bytes: null, top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: null })) }));
/** Only what survives every format: token, logprob, alternatives' token and logprob. */
const core = (list: any[]) => list.map((t) => ({ token: t.token, logprob: t.logprob ?? t.logProbability, top: (t.top_logprobs ?? []).map((a: any) => ({ token: a.token, logprob: a.logprob })) }));
const CORE = TOKENS.map((t) => ({ token: t.token, logprob: t.logprob, top: t.top }));

describe("the request: logprobs and their count reach every target that has them", () => {
  const chat = { model: "m", messages: [{ role: "user", content: "hi" }], logprobs: true, top_logprobs: 2 };
  test("a Chat client's logprobs / top_logprobs", () => {
    const toChat = build("openai-chat", chat, "openai-chat", "openai");
    expect([toChat.body.logprobs, toChat.body.top_logprobs]).toEqual([true, 2]);
    const toResp = build("openai-chat", chat, "openai-responses", "openai-responses");
    expect([toResp.body.include, toResp.body.top_logprobs]).toEqual([["message.output_text.logprobs"], 2]);
    expect(toResp.warnings).toEqual([]);
    const toGem = build("openai-chat", chat, "gemini", "gemini");
    expect(toGem.body.generationConfig).toEqual({ responseLogprobs: true, logprobs: 2 });
    expect(toGem.warnings).toEqual([]);
    const toClaude = build("openai-chat", chat, "anthropic-messages", "anthropic");
    expect(["logprobs", "top_logprobs"].filter((k) => k in toClaude.body)).toEqual([]);
    expect(toClaude.warnings.map((w) => w.message)).toContain("logprobs has no Anthropic equivalent and was dropped");
  });

  test("a Responses client's include entry and top_logprobs", () => {
    const resp = { model: "m", input: "hi", include: ["message.output_text.logprobs"], top_logprobs: 3 };
    const toChat = build("openai-responses", resp, "openai-chat", "openai");
    expect([toChat.body.logprobs, toChat.body.top_logprobs]).toEqual([true, 3]);
    expect(toChat.warnings).toEqual([]);
    expect(build("openai-responses", resp, "gemini", "gemini").body.generationConfig).toEqual({ responseLogprobs: true, logprobs: 3 });
    const same = build("openai-responses", resp, "openai-responses", "openai-responses");
    expect([same.body.include, same.body.top_logprobs]).toEqual([["message.output_text.logprobs"], 3]);
    // A count without the include entry asks for no logprobs: Chat would refuse top_logprobs without logprobs.
    const countOnly = build("openai-responses", { model: "m", input: "hi", top_logprobs: 3 }, "openai-chat", "openai");
    expect(["logprobs", "top_logprobs"].filter((k) => k in countOnly.body)).toEqual([]);
  });

  test("a Gemini client's responseLogprobs / logprobs", () => {
    const gem = { model: "m", contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { responseLogprobs: true, logprobs: 4 } };
    const toChat = build("gemini", gem, "openai-chat", "openai");
    expect([toChat.body.logprobs, toChat.body.top_logprobs]).toEqual([true, 4]);
    expect(toChat.warnings).toEqual([]);
    const toResp = build("gemini", gem, "openai-responses", "openai-responses");
    expect([toResp.body.include, toResp.body.top_logprobs]).toEqual([["message.output_text.logprobs"], 4]);
    expect(build("gemini", gem, "gemini", "gemini").body.generationConfig).toEqual({ responseLogprobs: true, logprobs: 4 });
  });
});

describe("JSON replies carry the tokens into the client's shape", () => {
  const chatReply = {
    id: "c1",
    object: "chat.completion",
    model: "up",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop", logprobs: { content: chatTokens, refusal: null } }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  const responsesReply = {
    id: "resp_1",
    object: "response",
    status: "completed",
    output: [{ type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: chatTokens }] }],
    usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
  };
  const geminiReply = { candidates: [{ content: { role: "model", parts: [{ text: "Hello" }] }, finishReason: "STOP", index: 0, logprobsResult: geminiResult(TOKENS) }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } };

  test("Chat upstream → Responses and Gemini clients", () => {
    const r = jsonThrough("openai-chat", chatReply, "openai-responses");
    expect(r.output[0].content[0].logprobs).toEqual(chatTokens);
    const g = jsonThrough("openai-chat", chatReply, "gemini");
    expect(g.candidates[0].logprobsResult).toEqual(geminiResult(TOKENS));
    expect(jsonThrough("openai-chat", chatReply, "openai-chat").choices[0].logprobs).toEqual({ content: chatTokens, refusal: null });
  });

  test("Responses upstream → Chat and Gemini clients", () => {
    expect(jsonThrough("openai-responses", responsesReply, "openai-chat").choices[0].logprobs).toEqual({ content: chatTokens, refusal: null });
    expect(jsonThrough("openai-responses", responsesReply, "gemini").candidates[0].logprobsResult).toEqual(geminiResult(TOKENS));
  });

  test("Gemini upstream → Chat and Responses clients (no bytes from Gemini: Chat null, Responses the token's UTF-8)", () => {
    expect(jsonThrough("gemini", geminiReply, "openai-chat").choices[0].logprobs).toEqual({ content: chatTokensNoBytes, refusal: null });
    expect(jsonThrough("gemini", geminiReply, "openai-responses").output[0].content[0].logprobs).toEqual(chatTokens);
  });

  test("a JSON upstream reply to a streaming client: the text's one delta carries every token", () => {
    const resp = codecFor("gemini").decodeResponse(geminiReply, { family: "gemini" });
    let out = "";
    const enc = codecFor("openai-chat").createEncoder!({ model: "client-model" }, (t) => (out += t));
    for (const e of responseToEvents(resp)) enc.event(e);
    enc.end();
    const chunks = sseEvents(out).filter((e) => e.json?.choices?.length > 0);
    expect(chunks.flatMap((e) => e.json.choices[0].logprobs?.content ?? [])).toEqual(chatTokensNoBytes);
  });

  test("a reply without logprobs keeps its old shape", () => {
    const plain = { ...chatReply, choices: [{ ...chatReply.choices[0], logprobs: null }] };
    expect(jsonThrough("openai-chat", plain, "openai-chat").choices[0].logprobs).toBeNull();
    expect(jsonThrough("openai-chat", plain, "openai-responses").output[0].content[0].logprobs).toEqual([]);
    expect("logprobsResult" in jsonThrough("openai-chat", plain, "gemini").candidates[0]).toBe(false);
  });
});

describe("streams carry each chunk's tokens on its delta and reassemble them exactly", () => {
  const chunk = (delta: object, logprobs: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "up", choices: [{ index: 0, delta, logprobs, finish_reason: finish }] })}\n\n`;
  const chatSse =
    chunk({ role: "assistant", content: "" }, null) +
    chunk({ content: "Hel" }, { content: [chatTokens[0]], refusal: null }) +
    chunk({ content: "lo" }, { content: [chatTokens[1]], refusal: null }) +
    chunk({}, null, "stop") +
    "data: [DONE]\n\n";
  const rev = (type: string, body: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
  const responsesSse =
    rev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }) +
    rev("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }) +
    rev("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } }) +
    rev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel", logprobs: [responsesDeltaTokens[0]] }) +
    rev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "lo", logprobs: [responsesDeltaTokens[1]] }) +
    rev("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text: "Hello", logprobs: chatTokens }) +
    rev("response.output_item.done", { output_index: 0, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: chatTokens }] } }) +
    rev("response.completed", { response: { id: "resp_1", status: "completed", output: [], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } } });
  const gemChunk = (obj: object) => `data: ${JSON.stringify(obj)}\r\n\r\n`;
  const geminiSse =
    gemChunk({ candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] }, index: 0, logprobsResult: geminiResult([TOKENS[0]!]) }] }) +
    gemChunk({ candidates: [{ content: { role: "model", parts: [{ text: "lo" }] }, finishReason: "STOP", index: 0, logprobsResult: geminiResult([TOKENS[1]!]) }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } });

  const chatClient = (sse: string) => {
    const chunks = sseEvents(sse).filter((e) => e.json?.choices?.length > 0);
    return { text: chunks.map((e) => e.json.choices[0].delta.content ?? "").join(""), tokens: chunks.flatMap((e) => e.json.choices[0].logprobs?.content ?? []) };
  };
  const responsesClient = (sse: string) => {
    const evs = sseEvents(sse).map((e) => e.json);
    const deltas = evs.filter((e) => e.type === "response.output_text.delta");
    const completed = evs.find((e) => e.type === "response.completed");
    return {
      text: deltas.map((d) => d.delta).join(""),
      deltaTokens: deltas.flatMap((d) => d.logprobs),
      done: evs.find((e) => e.type === "response.output_text.done").logprobs,
      part: evs.find((e) => e.type === "response.content_part.done").part.logprobs,
      completed: completed.response.output[0].content[0].logprobs,
    };
  };
  const geminiClient = (sse: string) => {
    const chunks = sseEvents(sse).map((e) => e.json.candidates[0]);
    return { text: chunks.flatMap((c) => c.content.parts.map((p: any) => p.text ?? "")).join(""), tokens: chunks.flatMap((c) => c.logprobsResult?.chosenCandidates ?? []), tops: chunks.flatMap((c) => c.logprobsResult?.topCandidates ?? []) };
  };

  for (const [up, sse] of [["openai-chat", chatSse], ["openai-responses", responsesSse], ["gemini", geminiSse]] as const) {
    test(`${up} upstream → Chat client: delta logprobs per chunk, exact values`, () => {
      const c = chatClient(streamThrough(up, sse, "openai-chat"));
      expect(c.text).toBe("Hello");
      expect(c.tokens).toEqual(up === "gemini" ? chatTokensNoBytes : up === "openai-responses" ? TOKENS.map((t) => ({ token: t.token, logprob: t.logprob, bytes: null, top_logprobs: t.top.map((a) => ({ token: a.token, logprob: a.logprob, bytes: null })) })) : chatTokens);
    });

    test(`${up} upstream → Responses client: deltas, the .done event, the part and response.completed`, () => {
      const r = responsesClient(streamThrough(up, sse, "openai-responses"));
      expect(r.text).toBe("Hello");
      expect(r.deltaTokens).toEqual(responsesDeltaTokens);
      for (const whole of [r.done, r.part, r.completed]) expect(whole).toEqual(chatTokens);
    });

    test(`${up} upstream → Gemini client: each chunk's logprobsResult`, () => {
      const g = geminiClient(streamThrough(up, sse, "gemini"));
      expect(g.text).toBe("Hello");
      expect(core(g.tokens)).toEqual(CORE.map((t) => ({ ...t, top: [] })));
      expect(g.tops.map((t: any) => t.candidates.map((a: any) => ({ token: a.token, logprob: a.logProbability })))).toEqual(TOKENS.map((t) => t.top));
    });

    test(`${up} upstream streamed → a JSON client's text part holds every token`, () => {
      const resp = accumulate(streamEvents(up, sse)).response;
      const text = resp.content.find((p) => p.type === "text")!;
      expect(text.type === "text" && text.logprobs?.map((t) => ({ token: t.token, logprob: t.logprob, top: t.top?.map((a) => ({ token: a.token, logprob: a.logprob })) }))).toEqual(CORE);
    });
  }

  test("a stream without logprobs: no logprobs member in Chat chunks, [] in Responses, no logprobsResult in Gemini", () => {
    const plain = chunk({ role: "assistant", content: "" }, null) + chunk({ content: "Hi" }, null) + chunk({}, null, "stop") + "data: [DONE]\n\n";
    const toChat = streamThrough("openai-chat", plain, "openai-chat");
    expect(toChat).not.toContain("logprobs");
    const r = sseEvents(streamThrough("openai-chat", plain, "openai-responses")).map((e) => e.json);
    expect(r.find((e) => e.type === "response.output_text.delta").logprobs).toEqual([]);
    expect(r.find((e) => e.type === "response.completed").response.output[0].content[0].logprobs).toEqual([]);
    expect(streamThrough("openai-chat", plain, "gemini")).not.toContain("logprobsResult");
  });
});
