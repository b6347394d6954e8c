/**
 * An upstream reply whose tool call nests arrays and objects far deeper than any real reply (60,000
 * levels, which `JSON.parse` takes but `JSON.stringify` spent ~1 s of CPU on before it ran out of
 * stack), through the real gateway and read as the client would (formats/json-depth.ts; README "Not
 * done yet" until this was fixed): where the gateway would serialise the parsed value again (a whole
 * reply's decode, a hub decoder, a client encoder parsing arguments text into an object) it refuses one
 * nesting more than 1,000 levels at once: a failed attempt before the commit point (retried; the
 * retry's reply is what the client gets), the format's in-band error naming the cause after it. Never
 * the gateway's own failure ("The gateway failed while relaying the reply."), never a finished reply.
 * A native reply that reports its usage is forwarded as it came, unwalked.
 */
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, upstreamNestedTooDeep } from "../../formats/json-depth.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

/** Generous per-test timeout, ms: a regression would spend ~1 s of CPU per overflow (7–22 s on a loaded machine). */
const SLOW = 60_000;

const DEEP = "[".repeat(60_000) + "]".repeat(60_000);
const DEEP_OBJECT = `{"a":${DEEP}}`;

const chat = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-d", object: "chat.completion.chunk", created: 1750000000, model: "gpt-x", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The error frame an Anthropic client reads for `what` (formats/json-depth.ts upstreamNestedTooDeep). */
const anthropicError = (what: string) => `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "api_error", message: upstreamNestedTooDeep(what).message } })}\n\n`;

const post = (path: string, body: unknown) =>
  fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

/** The route trace's attempt errors of a reply the client has read whole. */
async function attemptErrors(res: Response): Promise<Array<string | undefined>> {
  const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
  return trace.attempts.map((a) => a.error);
}

/** The last request line the gateway logged. */
const lastOutcome = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1)?.outcome;

/**
 * A streamed reply whose pieces after the first wait until {@link release} is called: the test calls it
 * once the client has the response headers, so what follows arrives after the commit point however
 * slow the machine.
 */
function afterCommit(first: string, rest: string) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { reply: { sse: first + rest, split_at: [Buffer.byteLength(first)], resume_after_first: gate }, release };
}

describe("an upstream reply nested 60,000 levels deep", () => {
  test("native Messages JSON (a tool input that deep, no usage: its length would be measured): a failed attempt, retried; the client gets the retry's reply", async () => {
    const body = `{"id":"msg_d","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":${DEEP_OBJECT}}],"stop_reason":"tool_use","stop_sequence":null}`;
    suite.gw.fake.enqueue({ text: body, headers: { "content-type": "application/json" } });
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const reply = (await res.json()) as any;
    expect(reply.content).toEqual([{ type: "text", text: "Hello from the fake upstream." }]);
    expect(suite.gw.fake.requests.length).toBe(2);
    expect((await attemptErrors(res))[0]).toBe(upstreamNestedTooDeep("tool-call arguments").message);
  }, SLOW);

  test("native Messages JSON (a tool input that deep, usage reported): forwarded as it came, unwalked", async () => {
    const body = `{"id":"msg_d","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":${DEEP_OBJECT}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}`;
    suite.gw.fake.enqueue({ text: body, headers: { "content-type": "application/json" } });
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(body);
    expect(suite.gw.fake.requests.length).toBe(1);
  }, SLOW);

  test("translated JSON (Chat client, Gemini provider, call args that deep): a failed attempt, retried; the client gets the retry's reply", async () => {
    const body = `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${DEEP_OBJECT}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":3}}`;
    suite.gw.fake.enqueue({ text: body, headers: { "content-type": "application/json" } });
    const res = await post("/v1/chat/completions", { model: "gem/gemini-x", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const reply = (await res.json()) as any;
    expect(reply.choices[0].message.content).toBe("Hello from the fake upstream.");
    expect(reply.choices[0].message.tool_calls).toBeUndefined();
    expect(suite.gw.fake.requests.length).toBe(2);
    expect((await attemptErrors(res))[0]).toBe(upstreamNestedTooDeep("tool-call arguments").message);
  }, SLOW);

  test("translated stream (Messages client, Gemini provider), a call whose args are that deep after the commit: the text so far, then exactly one event: error naming the cause; no message_stop; logged failed", async () => {
    const first = `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "The answer is" }] }, index: 0 }] })}\n\n`;
    const rest = `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${DEEP_OBJECT}}}]},"finishReason":"STOP","index":0}]}\n\n`;
    const { reply, release } = afterCommit(first, rest);
    suite.gw.fake.enqueue(reply);
    const res = await post("/v1/messages", { model: "gem/gemini-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    release();
    const body = await res.text();
    expect(body).toContain('"text":"The answer is"');
    expect(body.endsWith(anthropicError("tool-call arguments"))).toBe(true);
    expect(body.split("event: error").length).toBe(2);
    expect(body).not.toContain("message_stop");
    expect(body).not.toContain("[[[");
    expect(lastOutcome()).toBe("upstream_error");
    expect(suite.gw.fake.requests.length).toBe(1);
  }, SLOW);

  test("translated stream (Gemini client, Chat provider), tool-call arguments that deep (JSON in a string) after the commit: the text so far, then Gemini's in-band error naming the cause", async () => {
    const first = chat({ role: "assistant", content: "The answer is" });
    const rest =
      chat({ tool_calls: [{ index: 0, id: "call_d", type: "function", function: { name: "f", arguments: DEEP_OBJECT } }] }) + chat({}, "tool_calls") + "data: [DONE]\n\n";
    const { reply, release } = afterCommit(first, rest);
    suite.gw.fake.enqueue(reply);
    const res = await post("/v1beta/models/oai/gpt-x:streamGenerateContent?alt=sse", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    expect(res.status).toBe(200);
    release();
    const datas = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(datas[0].candidates[0].content.parts).toEqual([{ text: "The answer is" }]);
    expect(datas.at(-1)).toEqual({ error: { code: 502, message: upstreamNestedTooDeep("tool-call arguments").message, status: "INTERNAL" } });
    expect(datas.some((d) => d.candidates?.[0]?.finishReason)).toBe(false);
    expect(lastOutcome()).toBe("upstream_error");
  }, SLOW);

  test("translated stream (Messages client, Chat provider sending a call's arguments as an object that deep) before any content: a failed attempt, retried; the client gets the retry's reply", async () => {
    const call = `data: {"id":"chatcmpl-d","object":"chat.completion.chunk","created":1750000000,"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_d","type":"function","function":{"name":"f","arguments":${DEEP_OBJECT}}}]},"finish_reason":null}]}\n\n`;
    suite.gw.fake.enqueue({ sse: call + chat({}, "tool_calls") + "data: [DONE]\n\n" });
    const res = await post("/v1/messages", { model: "oai/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain("event: message_stop");
    expect(body).not.toContain("event: error");
    expect([...body.matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join("")).toBe("Hello from the fake upstream.");
    expect(suite.gw.fake.requests.length).toBe(2);
    expect((await attemptErrors(res))[0]).toBe(upstreamNestedTooDeep("tool-call arguments").message);
  }, SLOW);

  test(`a reply nesting ${MAX_JSON_DEPTH} levels is relayed as it is (native Messages JSON)`, async () => {
    // The reply, its content list, the block and its input are four levels of it.
    const input = `{"a":${"[".repeat(MAX_JSON_DEPTH - 4)}${"]".repeat(MAX_JSON_DEPTH - 4)}}`;
    const body = `{"id":"msg_d","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":${input}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}`;
    suite.gw.fake.enqueue({ text: body, headers: { "content-type": "application/json" } });
    const res = await post("/v1/messages", { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(body);
    expect(suite.gw.fake.requests.length).toBe(1);
  });
});
