/**
 * Anthropic's 529 (overloaded) reaches a client of another format as 503, the status OpenAI's and
 * Gemini's APIs use for it, in the client's own error format and with the upstream's Retry-After when
 * it gave one (sdk16 S4: a Chat client got `HTTP/1.1 529 HM`). An Anthropic Messages client of the
 * same upstream still gets 529. Real gateway, fake Anthropic-compatible upstream answering 529.
 */
import { afterEach, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";

// The translated requests are bodies Anthropic's API takes (the fake is strict): the 529 is the upstream's,
// not a refusal. Registered before the suite's own afterEach, which clears the fake's record (hooks run in order).
afterEach(() => expect(suite.gw.fake.violations).toEqual([]));
const suite = gatewaySuite(undefined, { fakeOptions: { strict: true } });

const OVERLOADED = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("a Chat client gets 503 with Retry-After and an OpenAI error body; an Anthropic client of the same upstream keeps 529", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ status: 529, headers: { "retry-after": "7" }, json: OVERLOADED }));
  const chat = await post("/v1/chat/completions", { model: "anthc/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] });
  expect(chat.status).toBe(503);
  expect(chat.headers.get("retry-after")).toBe("7");
  expect(await chat.json()).toEqual({ error: { message: "Overloaded", type: "server_error", param: null, code: "overloaded_error" } });

  // (another model: the first one's account backs off after its 529)
  const anthropic = await post("/v1/messages", { model: "anthc/claude-opus-4-5", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
  expect(anthropic.status).toBe(529);
  expect(((await anthropic.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
  expect(gw.fake.requests.map((r) => r.model)).toEqual(["claude-sonnet-4-5", "claude-opus-4-5"]);
});

test("a Chat client gets 503 when the upstream named no wait, its Retry-After the account's 2 s backoff (SPEC 2.4); Gemini and Responses clients 503 too", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ status: 529, json: OVERLOADED }));
  const chat = await post("/v1/chat/completions", { model: "anth/claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] });
  expect(chat.status).toBe(503);
  // SPEC 2.4: a final 503 says when the first account is free; the only one backs off 2 s (it said none before).
  expect(chat.headers.get("retry-after")).toMatch(/^[12]$/);
  expect(((await chat.json()) as { error: { code: string } }).error.code).toBe("overloaded_error");
  // (each request another model: a model's account backs off after its 529)
  const responses = await post("/v1/responses", { model: "anth/claude-opus-4-5", input: "x" });
  expect(responses.status).toBe(503);
  const gemini = await post("/v1beta/models/anth%2Fclaude-haiku-4-5:generateContent", { contents: [{ role: "user", parts: [{ text: "x" }] }] });
  expect(gemini.status).toBe(503);
  expect(((await gemini.json()) as { error: { code: number; status: string } }).error).toMatchObject({ code: 503, status: "UNAVAILABLE" });
  expect(gw.fake.requests.map((r) => r.model)).toEqual(["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"]);
});

/** An Anthropic stream that sends some text, then an in-band `overloaded_error` (after commit). */
const MID_STREAM_OVERLOADED =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n' +
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial "}}\n\n' +
  'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';

/** The JSON of each `data:` line of an SSE body. */
const dataLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)) as Record<string, any>);

// (models of their own: a model's account backs off after the 529s above)
test("an overloaded error mid-stream reaches a Gemini client as code 503 UNAVAILABLE, as before the stream starts (not 529)", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ sse: MID_STREAM_OVERLOADED }));
  const res = await post("/v1beta/models/anth%2Fmid-stream-gemini:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "x" }] }] });
  expect(res.status).toBe(200);
  const chunks = dataLines(await res.text());
  expect(chunks[0]!.candidates[0].content.parts[0].text).toBe("partial ");
  expect(chunks.at(-1)).toEqual({ error: { code: 503, message: "Overloaded", status: "UNAVAILABLE" } });
});

test("an overloaded error mid-stream: a Chat client's in-band error has the code its 503 answer has; a Responses client's server_error; an Anthropic client's overloaded_error", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ sse: MID_STREAM_OVERLOADED }));
  const chat = await post("/v1/chat/completions", { model: "anth/mid-stream-chat", stream: true, messages: [{ role: "user", content: "x" }] });
  expect(chat.status).toBe(200);
  expect(dataLines(await chat.text()).at(-1)).toEqual({ error: { message: "Overloaded", type: "server_error", param: null, code: "overloaded_error" } });
  const responses = await post("/v1/responses", { model: "anth/mid-stream-responses", stream: true, input: "x" });
  const failed = dataLines(await responses.text()).at(-1)!;
  expect(failed.type).toBe("response.failed");
  expect(failed.response.error).toEqual({ code: "server_error", message: "Overloaded" });
  const anthropic = await post("/v1/messages", { model: "anth/mid-stream-anthropic", stream: true, max_tokens: 10, messages: [{ role: "user", content: "x" }] });
  expect(dataLines(await anthropic.text()).at(-1)).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
});
