/**
 * Stop sequences for an OpenAI Responses upstream, which has no stop field (REFERENCE §5.11: emulate or
 * reject, never drop silently): the gateway scans the reply's text, cuts it where the first stop
 * sequence begins (also one split across deltas), ends the reply with the client format's stop-sequence
 * reason (Messages `stop_sequence` naming it, Chat `stop`, Gemini `STOP`) and reads no more of the
 * upstream (its call is cancelled). Until 2026-12-07 the sequences were dropped with only an
 * `X-Switchyard-Warning: dropped_field`, and the client got the text past its stop sequence and
 * `end_turn`. Real gateway, fake upstream.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const suite = gatewaySuite();
// "\n\nUser:" arrives split across three deltas
const PIECES = ["The answer is 42.", "\n", "\nUs", "er: and what about", " more text after it"];
const BEFORE = "The answer is 42.";
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

/** The upstream's reply: the pieces, then (streamed) keep-alive comments for as long as the gateway reads. */
function upstream() {
  suite.gw.fake.handle((r) => {
    const reply = simpleReply("openai-responses", { textPieces: PIECES, model: r.model }, r.stream);
    return r.stream ? { ...reply, endless: ": keep-alive\n\n", endless_every_ms: 20 } : reply;
  });
}

const sseData = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)));

/** Waits (up to 5 s) until the fake upstream saw its call cancelled. */
async function upstreamCancelled(): Promise<number> {
  for (const end = Date.now() + 5000; suite.gw.fake.aborted === 0 && Date.now() < end; ) await Bun.sleep(10);
  return suite.gw.fake.aborted;
}

describe("stop sequences emulated for a Responses upstream", () => {
  test("Messages client, streaming: the text before the sequence exactly, stop_reason stop_sequence naming it; the upstream call is cancelled", async () => {
    upstream();
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-warning")).toBeNull();
    const events = sseData(await res.text());
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe(BEFORE);
    expect(events.find((e) => e.type === "message_delta").delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "\n\nUser:" });
    expect(events.at(-1).type).toBe("message_stop");
    expect(await upstreamCancelled()).toBe(1);
  });

  test("Messages client, not streaming: the same, as one JSON reply", async () => {
    upstream();
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const body = (await res.json()) as any;
    expect(body.content).toEqual([{ type: "text", text: BEFORE }]);
    expect([body.stop_reason, body.stop_sequence]).toEqual(["stop_sequence", "\n\nUser:"]);
  });

  test("Chat client, streaming (stop as a string): the text before it, finish_reason stop, [DONE]; the upstream call is cancelled", async () => {
    upstream();
    const res = await post("/v1/chat/completions", { model: "resp/gpt-x", stream: true, stop: "\n\nUser:", messages: [{ role: "user", content: "hi" }] });
    const text = await res.text();
    const chunks = sseData(text);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe(BEFORE);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(["stop"]);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(await upstreamCancelled()).toBe(1);
  });

  test("Chat client, streaming, the upstream's bytes arriving in pieces 30 ms apart (the sequence split across reads, after the commit point)", async () => {
    suite.gw.fake.handle((r) => {
      const sse = simpleReply("openai-responses", { textPieces: PIECES, model: r.model }, true).sse!;
      const cuts = ['"delta":"\\n"', '"delta":"\\nUs"', '"delta":"er: and'].map((m) => Buffer.byteLength(sse.slice(0, sse.indexOf(m) + 12)));
      return { sse, split_at: cuts, delay_ms: 30, endless: ": keep-alive\n\n", endless_every_ms: 20 };
    });
    const res = await post("/v1/chat/completions", { model: "resp/gpt-x", stream: true, stop: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const chunks = sseData(await res.text());
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe(BEFORE);
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(["stop"]);
    expect(await upstreamCancelled()).toBe(1);
  });

  test("Chat client, not streaming (stop as a list): content cut, finish_reason stop", async () => {
    upstream();
    const res = await post("/v1/chat/completions", { model: "resp/gpt-x", stop: ["nothing", "\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const body = (await res.json()) as any;
    expect([body.choices[0].message.content, body.choices[0].finish_reason]).toEqual([BEFORE, "stop"]);
  });

  test("Gemini client, streaming and not (generationConfig.stopSequences): text cut, finishReason STOP", async () => {
    for (const path of ["/v1beta/models/resp/gpt-x:streamGenerateContent?alt=sse", "/v1beta/models/resp/gpt-x:generateContent"]) {
      upstream();
      const res = await post(path, { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { stopSequences: ["\n\nUser:"] } });
      const text = await res.text();
      const chunks = path.includes("stream") ? sseData(text) : [JSON.parse(text)];
      const said = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []).map((p: { text?: string }) => p.text ?? "").join("");
      expect(said).toBe(BEFORE);
      expect(chunks.map((c) => c.candidates?.[0]?.finishReason).filter(Boolean)).toEqual(["STOP"]);
    }
  });

  test("the official SDKs read it: Anthropic's finalMessage() stop_sequence naming it, OpenAI's stream finish_reason stop, the text before it", async () => {
    upstream();
    const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: suite.gw.url, maxRetries: 0 });
    const msg = await anthropic.messages.stream({ model: "resp/gpt-x", max_tokens: 100, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(msg.content.map((b) => (b.type === "text" ? b.text : b.type))).toEqual([BEFORE]);
    expect([msg.stop_reason, msg.stop_sequence]).toEqual(["stop_sequence", "\n\nUser:"]);
    upstream();
    const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${suite.gw.url}/v1`, maxRetries: 0 });
    const done = await openai.chat.completions.stream({ model: "resp/gpt-x", stop: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] }).finalChatCompletion();
    expect([done.choices[0]!.message.content, done.choices[0]!.finish_reason]).toEqual([BEFORE, "stop"]);
  });

  test("a reply without the sequence is served whole, as the upstream ended it", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-responses", { textPieces: ["no stop ", "here"], model: r.model }, r.stream));
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const events = sseData(await res.text());
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe("no stop here");
    expect(events.find((e) => e.type === "message_delta").delta.stop_reason).toBe("end_turn");
  });
});

// Text held back because it may begin a stop sequence is the client's when the reply ends without
// one: before the stream's break (then the cut stream's error), or before its normal end; a match held
// for a longer stop is the cut when the stream breaks. (Noted on 2026-12-07 as lost on a break; these
// checks found it delivered, on the code of that day too.)
describe("held-back text at the reply's end", () => {
  /** The Responses stream of `pieces`, reset by the fake right after the delta holding `last`. */
  function broken(pieces: string[], last: string) {
    suite.gw.fake.handle((r) => {
      const sse = simpleReply("openai-responses", { textPieces: pieces, model: r.model }, true).sse!;
      const at = sse.indexOf(`"delta":${JSON.stringify(last)}`);
      const end = sse.indexOf("\n\n", at) + 2;
      return { sse, split_at: [Buffer.byteLength(sse.slice(0, end))], reset_after_bytes: Buffer.byteLength(sse.slice(0, end)) };
    });
  }

  test("Messages client: the stream breaks right after text that may begin the stop sequence: the text, then the cut stream's error", async () => {
    broken(["The answer is 42.", "\n"], "\n");
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const text = await res.text();
    const events = sseData(text);
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe("The answer is 42.\n");
    expect(events.at(-1).type).toBe("error");
    expect(text).not.toContain("message_stop");
  });

  test("Chat client: a match held while a longer stop that began earlier may still complete, then the break: the text before the match, finish_reason stop, a finished row", async () => {
    // "\n\nU": "\nU" matches at 1, but "\n\nUser:" began at 0 and may still complete, so all of it is held.
    broken(["The answer is 42.", "\n\nU"], "\n\nU");
    const res = await post("/v1/chat/completions", { model: "resp/gpt-x", stream: true, stop: ["\n\nUser:", "\nU"], messages: [{ role: "user", content: "hi" }] });
    const text = await res.text();
    const chunks = sseData(text);
    // the whole text's cut (cutReplyAtStop): "\nU" at 18
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join("")).toBe("The answer is 42.\n");
    expect(chunks.map((c) => c.choices?.[0]?.finish_reason).filter(Boolean)).toEqual(["stop"]);
    expect(text).not.toContain('"error"');
    const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.outcome).toBe("ok");
  });

  test("a normal end right after text that may begin the stop sequence: the text, then the upstream's finish", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-responses", { textPieces: ["The answer is 42.", "\n\nUs"], model: r.model }, r.stream));
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    const events = sseData(await res.text());
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe("The answer is 42.\n\nUs");
    expect(events.find((e) => e.type === "message_delta").delta.stop_reason).toBe("end_turn");
  });
});

/** The usage row of request `requestId`, once flushed (polled, up to 15 s). */
async function rowOf(requestId: string): Promise<{ usage: Record<string, number>; estimated: boolean }> {
  suite.gw.app.settle();
  for (const end = Date.now() + 15_000; ; await Bun.sleep(50)) {
    const body = (await (await fetch(`${suite.gw.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; usage: Record<string, number>; estimated: boolean }> };
    const row = body.calls.find((c) => c.requestId === requestId);
    if (row) return row;
    if (Date.now() > end) throw new Error(`no usage row for ${requestId}`);
  }
}

// What a streamed reply cut at an emulated stop sequence costs. Until session 46 the provider's usage
// read after the cut was dropped with the rest (the row and the client got the estimate of the text
// before the cut: 15 input, 5 output, marked estimated, where the provider said 11 and 7), and the
// estimate of a reply whose usage never came counted only the text the client got, not the sequence
// and what the upstream sent after it (generated, so billed).
describe("usage of a streamed reply cut at an emulated stop sequence", () => {
  const PROMPT = "Please read the file a.txt for me and tell me what it says."; // 59 characters: 15 tokens

  test("the upstream's end (with its usage) came in the read that brought the stop: its figures, in the row and the client's message_delta, not estimated", async () => {
    upstream(); // the fake writes the whole stream at once, response.completed with usage 11 / 7 included
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: PROMPT }] });
    const delta = sseData(await res.text()).find((e) => e.type === "message_delta");
    expect(delta.delta.stop_reason).toBe("stop_sequence");
    expect([delta.usage.input_tokens, delta.usage.output_tokens]).toEqual([11, 7]);
    expect(await rowOf(res.headers.get("x-request-id")!)).toMatchObject({ estimated: false, usage: { inputTokens: 11, outputTokens: 7 } });
  });

  test("no usage before the upstream's call is cancelled: the estimate of the request's input and of all the text read, the sequence and what followed it too", async () => {
    suite.gw.fake.handle((r) => {
      const sse = simpleReply("openai-responses", { textPieces: PIECES, model: r.model }, true).sse!;
      return { sse: sse.slice(0, sse.indexOf("event: response.output_text.done")), endless: ": keep-alive\n\n", endless_every_ms: 20 };
    });
    const res = await post("/v1/messages", { model: "resp/gpt-x", max_tokens: 100, stream: true, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: PROMPT }] });
    const events = sseData(await res.text());
    expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe(BEFORE);
    expect(await upstreamCancelled()).toBe(1);
    // All the pieces read, 58 characters: 15 tokens (the text before the cut alone, 17 characters, is 5).
    const output = Math.ceil(PIECES.join("").length / 4);
    expect(output).toBe(15);
    const delta = events.find((e) => e.type === "message_delta");
    expect([delta.usage.input_tokens, delta.usage.output_tokens]).toEqual([15, output]);
    expect(await rowOf(res.headers.get("x-request-id")!)).toMatchObject({ estimated: true, usage: { inputTokens: 15, outputTokens: output } });
  });
});

// An OpenAI reasoning model refuses Chat's `stop` (400 "Unsupported parameter: 'stop' is not supported
// with this model.", o3, o4-mini, gpt-5): a translated request goes without it and the gateway cuts the
// reply, as for a Responses upstream (formats/openai-common/models.ts dropRefusedFields). Until
// 2026-12-07 the stop went and the client got OpenAI's 400.
describe("stop sequences emulated for an OpenAI reasoning model on Chat Completions", () => {
  function chatUpstream() {
    suite.gw.fake.handle((r) => {
      const reply = simpleReply("openai-chat", { textPieces: PIECES, model: r.model }, r.stream);
      return r.stream ? { ...reply, endless: ": keep-alive\n\n", endless_every_ms: 20 } : reply;
    });
  }

  test("Messages client to oai/o3, streaming and not: no stop in the upstream body, the text before the sequence, stop_reason stop_sequence naming it", async () => {
    for (const stream of [true, false]) {
      chatUpstream();
      suite.gw.fake.requests.length = 0;
      const res = await post("/v1/messages", { model: "oai/o3", max_tokens: 100, stream, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-switchyard-warning")).toBeNull();
      expect(suite.gw.fake.requests.at(-1)!.body.stop).toBeUndefined();
      if (stream) {
        const events = sseData(await res.text());
        expect(events.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("")).toBe(BEFORE);
        expect(events.find((e) => e.type === "message_delta").delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "\n\nUser:" });
      } else {
        const body = (await res.json()) as any;
        expect([body.content, body.stop_reason, body.stop_sequence]).toEqual([[{ type: "text", text: BEFORE }], "stop_sequence", "\n\nUser:"]);
      }
    }
  });

  test("a model that takes stop (oai/gpt-4.1) gets it in the body; the gateway does not cut", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-chat", { textPieces: PIECES, model: r.model }, r.stream));
    suite.gw.fake.requests.length = 0;
    const res = await post("/v1/messages", { model: "oai/gpt-4.1", max_tokens: 100, stop_sequences: ["\n\nUser:"], messages: [{ role: "user", content: "hi" }] });
    expect(suite.gw.fake.requests.at(-1)!.body.stop).toEqual(["\n\nUser:"]);
    expect(((await res.json()) as any).content[0].text).toBe(PIECES.join(""));
  });
});
