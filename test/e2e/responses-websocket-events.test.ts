/**
 * Over Codex's Responses WebSocket (SPEC 2.5) the gateway hands the socket the reply's events, not SSE
 * bytes to parse again (pipeline/ports.ts ReplyEventSink): what a client must still see. A long reply
 * cut into many small upstream reads arrives as the same events, once each and in order, as over HTTP;
 * each response is accounted once (log line, usage, the bytes metric counts the frames); a broken reply
 * and a client that leaves are reported as such; the flight recorder keeps the frames as the reply (the
 * JSON texts the socket sent, one a line, not SSE).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect, TERMINAL } from "../support/responses-socket.ts";
import { providersAtFake } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
${providersAtFake(["anth", "anthropic"])}
  - id: resp
    kind: openai-responses
    base_url: "{{FAKE}}"
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
settings:
  flight_recorder: { enabled: true, max_requests: 20 }
`);
});
afterAll(async () => {
  await gw?.stop();
});

const create = (input: string) => ({ type: "response.create", model: "anth/claude-test", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }], store: false });
/** Sixty text deltas, some with multi-byte characters, cut by the upstream into 23-byte reads (most events span reads). */
const PIECES = Array.from({ length: 60 }, (_, i) => `w${i}${i % 7 === 0 ? "é→" : ""} `);
function longReply() {
  const r = simpleReply("anthropic-messages", { text: PIECES.join(""), textPieces: PIECES, usage: { input: 31, output: 60 } }, true);
  const size = new TextEncoder().encode(r.sse!).length;
  return { ...r, split_at: Array.from({ length: Math.floor(size / 23) }, (_, i) => (i + 1) * 23) };
}
/** The data of each SSE event of an HTTP reply, parsed. */
const sseEvents = (text: string) => text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
/** An event without what differs between two replies (minted ids, timestamps). */
const shape = (e: any) => JSON.parse(JSON.stringify(e).replace(/"(resp|msg)_[A-Za-z0-9]+"/g, '"$1_x"').replace(/"created_at":\d+/g, '"created_at":0'));
/** The gateway's log lines of requests that came over the socket. */
const socketLogs = () => gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request" && l.transport === "websocket");
async function bytesMetric(): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("switchyard_stream_bytes_sent_total{") && l.includes('endpoint="responses"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}
/** Waits for `check` (the test's own timeout bounds the wait; a loaded machine decides how long it takes). */
async function until(check: () => boolean) {
  while (!check()) await Bun.sleep(20);
}

describe("the reply handed to the socket as events", () => {
  test("a long reply in many small reads: every event once, in order, the same as the HTTP stream", async () => {
    gw.fake.reset();
    gw.fake.handle(() => longReply());
    const http = await fetch(`${gw.url}/v1/responses`, { method: "POST", body: JSON.stringify({ ...create("hi"), type: undefined, stream: true }) });
    const overHttp = sseEvents(await http.text());
    const c = await connect(gw.url);
    c.send(create("hi"));
    const frames = await c.untilTerminal();
    gw.fake.handle(undefined);
    c.ws.close();

    expect(gw.fake.requests).toHaveLength(2);
    expect(frames.map(shape)).toEqual(overHttp.map(shape));
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta)).toEqual(PIECES);
    expect(frames.filter((f) => TERMINAL.has(f.type)).map((f) => f.type)).toEqual(["response.completed"]);
    expect(frames.at(-1).response.output[0].content[0].text).toBe(PIECES.join(""));
  });

  test("each response is accounted once: one log line with its usage, and the bytes metric grows by the frames sent", async () => {
    gw.fake.reset();
    gw.fake.handle(() => longReply());
    const before = socketLogs().length;
    const bytesBefore = await bytesMetric();
    const c = await connect(gw.url);
    c.send(create("one"));
    await c.untilTerminal();
    c.send(create("two"));
    await c.untilTerminal();
    gw.fake.handle(undefined);
    c.ws.close();
    await until(() => socketLogs().length >= before + 2);

    const lines = socketLogs().slice(before);
    expect(lines.map((l) => l.outcome)).toEqual(["ok", "ok"]);
    for (const l of lines) expect(l.usage).toMatchObject({ inputTokens: 31, outputTokens: 60 });
    const sent = c.raw.reduce((n, f) => n + Buffer.byteLength(f), 0);
    expect((await bytesMetric()) - bytesBefore).toBe(sent);
  });

  test("a reply cut off mid-stream: the frames end with response.failed alone, as on the native lane, and the request is logged once as upstream_error", async () => {
    gw.fake.reset();
    const r = longReply();
    gw.fake.enqueue({ ...r, sse: r.sse!.slice(0, Math.floor(r.sse!.length / 2)) });
    const before = socketLogs().length;
    const c = await connect(gw.url);
    c.send(create("hi"));
    const frames = await c.untilTerminal();
    c.ws.close();
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(frames.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error" } } });
    expect(frames.filter((f) => f.type === "error")).toEqual([]);
    expect(frames.filter((f) => TERMINAL.has(f.type))).toHaveLength(1);
    await until(() => socketLogs().length > before);
    // The gateway has handled the close (its close frame came back): a second line for the request,
    // had the close reported it again, would be there now (reading the lines settles the after-reply work).
    await c.closed;
    expect(socketLogs().slice(before).map((l) => l.outcome)).toEqual(["upstream_error"]);
  });

  test("a reply cut off mid-stream ends the same way on the translated lane (Anthropic upstream) and the native one (Responses upstream): response.failed alone, no error frame", async () => {
    const ends: Record<string, string[]> = {};
    for (const [model, format] of [["anth/claude-test", "anthropic-messages"], ["resp/gpt-test", "openai-responses"]] as const) {
      gw.fake.reset();
      const r = simpleReply(format, { text: PIECES.join(""), textPieces: PIECES, usage: { input: 31, output: 60 } }, true);
      // cut after the tenth text delta: the reply has started, and is not finished
      let at = 0;
      for (let i = 0; i < 10; i++) at = r.sse!.indexOf("\n\n", r.sse!.indexOf(format === "openai-responses" ? "response.output_text.delta" : "text_delta", at)) + 2;
      gw.fake.enqueue({ ...r, sse: r.sse!.slice(0, at) });
      const c = await connect(gw.url);
      c.send({ ...create("hi"), model });
      const frames = await c.untilTerminal();
      c.ws.close();
      expect(frames.map((f) => f.sequence_number), model).toEqual(frames.map((_, i) => i));
      expect(frames.filter((f) => f.type === "response.output_text.delta").length, model).toBe(10);
      ends[model] = frames.slice(-2).map((f) => f.type);
      expect(frames.at(-1), model).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error" } } });
    }
    expect(ends["anth/claude-test"]).toEqual(["response.output_text.delta", "response.failed"]);
    expect(ends["resp/gpt-test"]).toEqual(ends["anth/claude-test"]!);
  });

  test("a client that leaves mid-reply: the upstream call is cancelled and the request logged once as client_closed", async () => {
    gw.fake.reset();
    const r = longReply();
    const head = r.sse!.slice(0, r.sse!.indexOf("content_block_delta") + 200);
    gw.fake.enqueue({ sse: r.sse, stall_after_bytes: new TextEncoder().encode(head).length });
    const before = socketLogs().length;
    const c = await connect(gw.url);
    c.send(create("hi"));
    for (;;) if ((await c.next()).type === "response.output_text.delta") break;
    c.ws.close();
    await until(() => gw.fake.aborted > 0 && socketLogs().length > before);
    await c.closed; // the gateway has handled the close: any second abort or line would be there now
    expect(gw.fake.aborted).toBe(1);
    expect(socketLogs().slice(before).map((l) => l.outcome)).toEqual(["client_closed"]);
  });

  test("the flight recorder keeps the frames the socket sent as the reply's events", async () => {
    gw.fake.reset();
    gw.fake.handle(() => longReply());
    const before = socketLogs().length;
    const c = await connect(gw.url);
    c.send(create("recorded"));
    const frames = await c.untilTerminal();
    gw.fake.handle(undefined);
    c.ws.close();
    await until(() => socketLogs().length > before);
    const requestId = socketLogs().at(-1)!.requestId;
    const rec = (await (await fetch(`${gw.url}/admin/api/calls/${requestId}/recording`)).json()) as any;
    expect(rec.response.status).toBe(200);
    // the frames as they went over the socket, one a line (they were kept as SSE text, which never did)
    expect(rec.transport).toBe("websocket");
    expect(rec.response.frames).toEqual(c.raw);
    expect(rec.response.frames.map((f: string) => JSON.parse(f))).toEqual(frames);
    expect(rec.response.body).toBe(c.raw.map((f) => `${f}\n`).join(""));
    expect(rec.response.events).toBeUndefined();
  });
});
