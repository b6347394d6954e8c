/**
 * An Anthropic stream whose connection breaks after the stop reason (`message_delta`), so only the final
 * `message_stop` is lost (README "Not done yet" until this was fixed): SPEC 6.4's exception, the client
 * gets the missing closing frames and a finished reply, and the call is recorded as the finished reply
 * it is (`ok`) in the log line, usage row, route trace and metrics (the dashboard reads the same row and
 * live event), on the native and the translated lanes; a non-streaming client, whose reply is gathered
 * from the stream, gets the finished JSON reply (it was a failed attempt, retried). Cut before the stop
 * reason it stays a failure.
 */
import { describe, expect, test } from "bun:test";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { ssePayloads } from "../support/openai-chat-helpers.ts";

const suite = gatewaySuite();

/** The last request line the gateway logged. */
const lastOutcome = () => suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1)?.outcome;
describe("an Anthropic stream cut after its stop reason (only the final message_stop lost, SPEC 6.4's exception)", () => {
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const start = ev("message_start", { type: "message_start", message: { id: "msg_c", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } });
  const text =
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The answer is 42." } }) +
    ev("content_block_stop", { type: "content_block_stop", index: 0 });
  const delta = ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } });
  const stop = ev("message_stop", { type: "message_stop" });
  // The connection breaks right after the message_delta: the stop reason arrived, the message_stop never does.
  const cut = { sse: start + text + delta + stop, reset_after_bytes: (start + text + delta).length };
  const send = (path: string, body: unknown) =>
    fetch(`${suite.gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  const getJson = async (path: string): Promise<any> => (await fetch(`${suite.gw.url}${path}`)).json();

  test("native Messages lane: the client gets the message_stop added, and the call is a finished one in the log line, usage row, route trace and metrics", async () => {
    suite.gw.fake.enqueue(cut);
    const res = await send("/v1/messages", { model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(start + text + delta + 'event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(lastOutcome()).toBe("ok");
    const requestId = res.headers.get("x-request-id");
    const row = ((await getJson("/admin/api/calls?limit=20")).calls as any[]).find((c) => c.requestId === requestId);
    expect(row).toMatchObject({ outcome: "ok", status: 200, usage: { inputTokens: 5, outputTokens: 7 }, estimated: false });
    const trace = await getJson(`/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`);
    expect(trace.outcome).toBe("ok");
    const metrics = await (await fetch(`${suite.gw.url}/metrics`)).text();
    expect(metrics).not.toContain('switchyard_requests_total{endpoint="messages",provider="anth",outcome="upstream_error"}');
  });

  test("Responses and Chat clients (translated): the reply ends as it finished (response.completed, finish_reason stop), never failed; logged ok", async () => {
    suite.gw.fake.enqueue(cut);
    const res = await send("/v1/responses", { model: "anth/claude-x", stream: true, input: "hi" });
    const body = await res.text();
    expect(body).toContain("event: response.completed");
    expect(body).not.toContain("event: response.failed");
    expect(body).not.toContain("event: error");
    expect(lastOutcome()).toBe("ok");

    suite.gw.fake.enqueue(cut);
    const chat = ssePayloads(await (await send("/v1/chat/completions", { model: "anth/claude-x", stream: true, messages: [{ role: "user", content: "hi" }] })).text());
    expect(chat.at(-1)).toBe("[DONE]");
    expect(chat.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chat.some((p) => p !== "[DONE]" && p.error)).toBe(false);
    expect(lastOutcome()).toBe("ok");
  });

  test("a non-streaming client (the stream gathered into one JSON reply): the finished reply, served once and recorded ok, not retried", async () => {
    // Messages client, native provider: the reply the stream carried, as one JSON body.
    suite.gw.fake.enqueue(cut);
    const res = await send("/v1/messages", { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: "msg_c",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "The answer is 42." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 5, output_tokens: 7 },
    });
    expect(suite.gw.fake.requests.length).toBe(1);
    expect(lastOutcome()).toBe("ok");
    const requestId = res.headers.get("x-request-id");
    const row = ((await getJson("/admin/api/calls?limit=20")).calls as any[]).find((c) => c.requestId === requestId);
    expect(row).toMatchObject({ outcome: "ok", status: 200, usage: { inputTokens: 5, outputTokens: 7 }, estimated: false });

    // Chat and Responses clients (translated) on the same upstream: completed, not retried.
    suite.gw.fake.enqueue(cut);
    const chat: any = await (await send("/v1/chat/completions", { model: "anth/claude-x", messages: [{ role: "user", content: "hi" }] })).json();
    expect(chat.choices[0]).toMatchObject({ message: { role: "assistant", content: "The answer is 42." }, finish_reason: "stop" });
    expect(chat.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 7 });
    suite.gw.fake.enqueue(cut);
    const responses: any = await (await send("/v1/responses", { model: "anth/claude-x", input: "hi" })).json();
    expect(responses.status).toBe("completed");
    expect(responses.output.at(-1).content[0].text).toBe("The answer is 42.");
    expect(suite.gw.fake.requests.length).toBe(3);
    expect(lastOutcome()).toBe("ok");
  });

  test("a non-streaming client, cut before the stop reason: a failed attempt, retried (the retry's reply is what it gets)", async () => {
    suite.gw.fake.enqueue({ sse: start + text + delta + stop, reset_after_bytes: (start + text).length });
    const res = await send("/v1/messages", { model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].text).toBe("Hello from the fake upstream.");
    expect(suite.gw.fake.requests.length).toBe(2);
  });

  test("cut before the stop reason it is still a failed reply: the client gets the error, logged upstream_error", async () => {
    suite.gw.fake.enqueue({ sse: start + text + delta + stop, reset_after_bytes: (start + text).length });
    const res = await send("/v1/messages", { model: "anth/claude-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] });
    const body = await res.text();
    expect(body.startsWith(start + text)).toBe(true);
    expect(body).toContain("event: error");
    expect(body).not.toContain("message_stop");
    expect(lastOutcome()).toBe("upstream_error");
  });
});
