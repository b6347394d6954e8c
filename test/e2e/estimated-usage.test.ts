/**
 * A provider that reports no usage (the recorded Chat stream openai-chat/tool-call-index-1.sse, which
 * has no usage chunk, through an `openai-compatible` provider): every client format that carries a
 * usage object gets the gateway's estimate, the same figures the request's usage row records (marked
 * estimated), not a confident 0 (until 2026-12-07: prompt_tokens 0 / completion_tokens 0 for a Chat
 * client with include_usage, zeros for Responses and Messages clients; a Gemini client got no
 * `usageMetadata` until the evening of 2026-12-07, now it gets the estimate too). Input: the body's 59 characters of text / 4 → 15; output: "Reading it." and the call's name
 * and arguments, 28 characters / 4 → 7 (pipeline/estimate-reply-usage.ts). Real gateway, fake upstream.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";

const suite = gatewaySuite();
const PROMPT = "Please read the file a.txt for me and tell me what it says.";
const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

/** The usage row of request `requestId`, once flushed (polled, up to 15 s). */
async function rowOf(requestId: string): Promise<{ usage: { inputTokens?: number; outputTokens?: number }; estimated: boolean }> {
  suite.gw.app.settle();
  for (const end = Date.now() + 15_000; ; await Bun.sleep(50)) {
    const body = (await (await fetch(`${suite.gw.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; usage: { inputTokens?: number; outputTokens?: number }; estimated: boolean }> };
    const row = body.calls.find((c) => c.requestId === requestId);
    if (row) return row;
    if (Date.now() > end) throw new Error(`no usage row for ${requestId}`);
  }
}

/** The last SSE data payload holding `key`, parsed. */
const lastWith = (sse: string, key: string) =>
  sse
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l.includes(key))
    .map((l) => JSON.parse(l.slice(6)))
    .at(-1);

type Reads = (text: string) => { input: number | undefined; output: number | undefined };
const CLIENTS: Array<[string, string, (stream: boolean) => unknown, Reads, Reads]> = [
  [
    "Chat (include_usage)",
    "/v1/chat/completions",
    (stream) => ({ model: "chat/m", stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: "user", content: PROMPT }] }),
    (t) => ((u) => ({ input: u.prompt_tokens, output: u.completion_tokens }))(lastWith(t, '"usage"').usage),
    (t) => ((u) => ({ input: u.prompt_tokens, output: u.completion_tokens }))(JSON.parse(t).usage),
  ],
  [
    "Messages",
    "/v1/messages",
    (stream) => ({ model: "chat/m", max_tokens: 100, stream, messages: [{ role: "user", content: PROMPT }] }),
    // message_delta's usage is the final one (the SDKs overwrite message_start's with it)
    (t) => ((u) => ({ input: u.input_tokens, output: u.output_tokens }))(lastWith(t, '"message_delta"').usage),
    (t) => ((u) => ({ input: u.input_tokens, output: u.output_tokens }))(JSON.parse(t).usage),
  ],
  [
    "Responses",
    "/v1/responses",
    (stream) => ({ model: "chat/m", stream, input: PROMPT }),
    (t) => ((u) => ({ input: u.input_tokens, output: u.output_tokens }))(lastWith(t, '"response.completed"').response.usage),
    (t) => ((u) => ({ input: u.input_tokens, output: u.output_tokens }))(JSON.parse(t).usage),
  ],
];

describe("a Chat provider that sends no usage: the client gets the gateway's estimate, the usage row's figures", () => {
  for (const [name, path, body, readStream, readJson] of CLIENTS) {
    for (const stream of [true, false]) {
      test(`${name} client${stream ? ", streaming" : ""}`, async () => {
        suite.gw.fake.enqueue({ sse: new TextDecoder().decode(await recordedBytes("openai-chat/tool-call-index-1.sse")) });
        const res = await post(path, body(stream));
        expect(res.status).toBe(200);
        const text = await res.text();
        const got = stream ? readStream(text) : readJson(text);
        expect(got).toEqual({ input: 15, output: 7 });
        const row = await rowOf(res.headers.get("x-request-id")!);
        expect(row.estimated).toBe(true);
        expect({ input: row.usage.inputTokens, output: row.usage.outputTokens }).toEqual(got);
      });
    }
  }

  test("a JSON reply without usage (a non-streaming Chat server): a Messages client, streaming or not, gets the estimate too", async () => {
    const json = { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "Reading it, it says hello." }, finish_reason: "stop" }] };
    for (const stream of [false, true]) {
      suite.gw.fake.enqueue({ json });
      const res = await post("/v1/messages", { model: "chat/m", max_tokens: 100, stream, messages: [{ role: "user", content: PROMPT }] });
      const text = await res.text();
      const u = stream ? lastWith(text, '"message_delta"').usage : JSON.parse(text).usage;
      // "Reading it, it says hello." is 26 characters: 7 tokens
      expect({ input: u.input_tokens, output: u.output_tokens }).toEqual({ input: 15, output: 7 });
      const row = await rowOf(res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ estimated: true, usage: { inputTokens: 15, outputTokens: 7 } });
    }
  });

  test("a Gemini client gets the estimate as usageMetadata, on the last chunk of a stream or in the JSON reply; the row is estimated", async () => {
    for (const path of ["/v1beta/models/chat/m:streamGenerateContent?alt=sse", "/v1beta/models/chat/m:generateContent"]) {
      suite.gw.fake.enqueue({ sse: new TextDecoder().decode(await recordedBytes("openai-chat/tool-call-index-1.sse")) });
      const res = await post(path, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
      expect(res.status).toBe(200);
      const text = await res.text();
      const usage = { promptTokenCount: 15, candidatesTokenCount: 7, totalTokenCount: 22 };
      if (path.includes("stream")) {
        const chunks = text.split("\n\n").filter((c) => c.startsWith("data: ")).map((c) => JSON.parse(c.slice(6)));
        // only the last chunk (the one with finishReason) carries it, as Gemini's own streams do
        expect(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined)).toBe(true);
        expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
        expect(chunks.at(-1).usageMetadata).toEqual(usage);
      } else expect(JSON.parse(text).usageMetadata).toEqual(usage);
      const row = await rowOf(res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ estimated: true, usage: { inputTokens: 15, outputTokens: 7 } });
    }
  });

  test("native Chat stream (kind openai) without a usage chunk: a client with include_usage gets one before [DONE] (choices [], the estimate), the upstream's bytes otherwise as they came", async () => {
    const upstream = new TextDecoder().decode(await recordedBytes("openai-chat/tool-call-index-1.sse"));
    suite.gw.fake.enqueue({ sse: upstream });
    const res = await post("/v1/chat/completions", { model: "oai/m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: PROMPT }] });
    expect(res.status).toBe(200);
    const text = await res.text();
    const at = upstream.indexOf("data: [DONE]");
    const added = text.slice(at, text.length - (upstream.length - at));
    expect(text.slice(0, at)).toBe(upstream.slice(0, at));
    expect(text.endsWith(upstream.slice(at))).toBe(true);
    expect(added.startsWith("data: ") && added.endsWith("\n\n")).toBe(true);
    const chunk = JSON.parse(added.slice(6));
    expect(chunk).toEqual({
      id: "msg_sanitized",
      object: "chat.completion.chunk",
      created: 0,
      model: "claude-haiku-4-5-20251001",
      choices: [],
      usage: { prompt_tokens: 15, completion_tokens: 7, total_tokens: 22, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    const row = await rowOf(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ estimated: true, usage: { inputTokens: 15, outputTokens: 7 } });
    // without include_usage: the upstream's bytes exactly
    suite.gw.fake.enqueue({ sse: upstream });
    const plain = await post("/v1/chat/completions", { model: "oai/m", stream: true, messages: [{ role: "user", content: PROMPT }] });
    expect(await plain.text()).toBe(upstream);
  });

  test("native Gemini pair (kind gemini) whose reply has no usageMetadata, streamed or not: the client gets the upstream's bytes as they came (no usage added, as on the other native lanes but Chat's include_usage), the row the estimate, marked estimated", async () => {
    const text = "Reading it, it says hello."; // 26 characters: 7 tokens
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    const sse =
      chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] } }], modelVersion: "m" }) +
      chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }], modelVersion: "m" });
    const json = { candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, finishReason: "STOP" }], modelVersion: "m" };
    for (const [path, reply, sent] of [
      ["/v1beta/models/gem/m:streamGenerateContent?alt=sse", { sse }, sse],
      ["/v1beta/models/gem/m:generateContent", { json }, JSON.stringify(json)],
    ] as const) {
      suite.gw.fake.enqueue(reply);
      const res = await post(path, { contents: [{ role: "user", parts: [{ text: PROMPT }] }] });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body.includes("usageMetadata")).toBe(false);
      if (path.includes("stream")) expect(body).toBe(sent);
      else expect(JSON.parse(body)).toEqual(json);
      const row = await rowOf(res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ estimated: true, usage: { inputTokens: 15, outputTokens: 7 } });
    }
  });

  test("a provider that reports usage: its figures, as before (not the estimate)", async () => {
    const sse = new TextDecoder().decode(await recordedBytes("openai-chat/tool-call-index-1.sse"));
    const usage = `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", choices: [], usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 } })}\n\n`;
    suite.gw.fake.enqueue({ sse: sse.replace("data: [DONE]", usage + "data: [DONE]") });
    const res = await post("/v1/messages", { model: "chat/m", max_tokens: 100, messages: [{ role: "user", content: PROMPT }] });
    expect(((await res.json()) as { usage: unknown }).usage).toMatchObject({ input_tokens: 40, output_tokens: 3 });
    const row = await rowOf(res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ estimated: false, usage: { inputTokens: 40, outputTokens: 3 } });
  });
});
