/**
 * The commit point of a streamed reply (SPEC R-8, 6.1; pipeline/commit.ts): once the first content has
 * been seen, what the upstream already delivered is taken at once. A reply that had already ended
 * reaches the client whole (one sized body, the same events); a reply still arriving streams the rest
 * as it comes, and a connection that breaks after the first content still ends with the in-band error.
 */
import { expect, test } from "bun:test";
import { startGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const chatRequest = (model: string) =>
  JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });

/** The request line of the log (one per request). */
const requestLines = (logs: string[]) => logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");

test("Chat → Chat: a stream the upstream sent whole arrives as one sized body with every event and the usage", async () => {
  const gw = await startGateway();
  try {
    gw.fake.enqueue(simpleReply("openai-chat", { text: "one two three", usage: { input: 12, output: 3 } }, true));
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: chatRequest("oai/gpt-x") });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const body = await res.text();
    expect(Number(res.headers.get("content-length"))).toBe(new TextEncoder().encode(body).byteLength);
    const frames = body.split("\n\n").filter((f) => f.trim().length > 0);
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("one two three");
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
    const [line] = requestLines(gw.logs);
    expect(line).toMatchObject({ outcome: "ok", status: 200, usage: { inputTokens: 12, outputTokens: 3 } });
  } finally {
    await gw.stop();
  }
});

test("Messages → Chat (translated): a stream the upstream sent whole arrives as one sized body ending in message_stop", async () => {
  const gw = await startGateway();
  try {
    gw.fake.enqueue(simpleReply("openai-chat", { text: "one two three", usage: { input: 12, output: 3 } }, true));
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "oai/gpt-x", stream: true, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(Number(res.headers.get("content-length"))).toBe(new TextEncoder().encode(body).byteLength);
    const events = body
      .split("\n\n")
      .filter((f) => f.trim().length > 0)
      .map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: "))!.slice("data: ".length)));
    expect(events[0].type).toBe("message_start");
    expect(events.at(-1).type).toBe("message_stop");
    expect(events.filter((e) => e.type === "content_block_delta").map((e) => e.delta.text).join("")).toBe("one two three");
    expect(events.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } });
    expect(requestLines(gw.logs)[0]).toMatchObject({ outcome: "ok", usage: { inputTokens: 12, outputTokens: 3 } });
  } finally {
    await gw.stop();
  }
});

test("a stream still arriving after its first content is streamed: the first part at once, the rest after the upstream's pause", async () => {
  const gw = await startGateway();
  try {
    const sse = simpleReply("openai-chat", { text: "one two three", textPieces: ["one", " two", " three"] }, true).sse!;
    // The first content event, then the rest only once the client has read the first part (it was a
    // fixed 300 ms pause, which a loaded machine outlasted: the client's first read then held it all).
    const cut = sse.indexOf("\n\n", sse.indexOf('"one"')) + 2;
    const firstRead = Promise.withResolvers<void>();
    gw.fake.enqueue({ sse, split_at: [cut], resume_after_first: firstRead.promise });
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: chatRequest("oai/gpt-x") });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBeNull();
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let first = "";
    try {
      first = dec.decode((await reader.read()).value);
    } finally {
      firstRead.resolve();
    }
    expect(first).toContain('"content":"one"');
    expect(first).not.toContain("[DONE]");
    let rest = "";
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += dec.decode(r.value);
    }
    expect(rest).toContain('"content":" two"');
    expect(rest.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(requestLines(gw.logs)[0]).toMatchObject({ outcome: "ok", status: 200 });
  } finally {
    await gw.stop();
  }
});

test("a connection that breaks right after the first content ends the committed stream with the in-band error", async () => {
  const gw = await startGateway();
  try {
    const sse = simpleReply("openai-chat", { text: "one two three", textPieces: ["one", " two", " three"] }, true).sse!;
    const cut = sse.indexOf("\n\n", sse.indexOf('"one"')) + 2;
    gw.fake.enqueue({ sse, split_at: [cut], delay_ms: 50, reset_after_bytes: cut });
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: chatRequest("oai/gpt-x") });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('"content":"one"');
    expect(body).not.toContain('"content":" two"');
    const frames = body.split("\n\n").filter((f) => f.trim().length > 0);
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(frames.at(-2)!.slice("data: ".length)).error.message).toContain("connection broke");
    expect(requestLines(gw.logs)[0]).toMatchObject({ outcome: "upstream_error" });
  } finally {
    await gw.stop();
  }
});
