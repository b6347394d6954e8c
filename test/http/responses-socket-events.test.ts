/**
 * A Responses WebSocket session forwards every event the gateway hands its sink as a frame (one corked
 * write per batch), and reads only the events that carry what it keeps (src/http/responses-socket.ts, READ_EVENTS): the finished output items and
 * the response id for `previous_response_id`. Streams with `event:` names (OpenAI's, the gateway's own
 * encoder) and streams of bare `data:` lines both keep the history; only the most recent responses
 * (RESPONSES_SOCKET_HISTORY, `historyLimit`) can be named.
 */
import { expect, test } from "bun:test";
import { ResponsesSocketSession, type SocketLike } from "../../src/http/responses-socket.ts";
import type { Gateway, IncomingRequest } from "../../pipeline/index.ts";
import type { ReplyEvent, ReplyEventSink } from "../../pipeline/ports.ts";

type Frame = Record<string, any>;

const ITEM = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello there", annotations: [] }] };

/**
 * A reply of nine events; `named` gives each its `event:` name (as the gateway's own encoder does);
 * `failed` ends it with `response.failed` instead of `response.completed`.
 */
function reply(named: boolean, failed = false): ReplyEvent[] {
  const events: Frame[] = [
    { type: "response.created", sequence_number: 0, response: { id: "resp_chain", status: "in_progress", output: [] } },
    { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { ...ITEM, status: "in_progress", content: [] } },
    { type: "response.content_part.added", sequence_number: 2, output_index: 0, content_index: 0, part: { type: "output_text", text: "" } },
    { type: "response.output_text.delta", sequence_number: 3, output_index: 0, content_index: 0, delta: "Hello" },
    { type: "response.output_text.delta", sequence_number: 4, output_index: 0, content_index: 0, delta: " there" },
    { type: "response.output_text.done", sequence_number: 5, output_index: 0, content_index: 0, text: "Hello there" },
    { type: "response.content_part.done", sequence_number: 6, output_index: 0, content_index: 0, part: { type: "output_text", text: "Hello there" } },
    { type: "response.output_item.done", sequence_number: 7, output_index: 0, item: ITEM },
    failed
      ? { type: "response.failed", sequence_number: 8, response: { id: "resp_chain", status: "failed", output: [], error: { code: "server_error", message: "cut off" } } }
      : { type: "response.completed", sequence_number: 8, response: { id: "resp_chain", status: "completed", output: [ITEM] } },
  ];
  return events.map((e) => ({ event: named ? e.type : undefined, data: JSON.stringify(e) }));
}

/** What the gateway does for a committed reply over the socket: the events to the sink (here in two reads), then its end; a Response without a body. */
function deliver(sink: ReplyEventSink | undefined, events: ReplyEvent[]): Response {
  sink!.events(events.slice(0, 4));
  sink!.events(events.slice(4));
  sink!.end();
  return new Response(null, { headers: { "content-type": "text/event-stream" } });
}

function session(named: boolean, historyLimit?: number, failed = false, events: () => ReplyEvent[] = () => reply(named, failed)) {
  const frames: Frame[] = [];
  const upstreamBodies: Frame[] = [];
  // `corks`: how many corked writes the frames went out in (Bun writes a corked batch at once).
  const out = { corks: 0, uncorkedFrames: 0 };
  let corked = false;
  const ws: SocketLike = {
    send: (d) => {
      if (!corked) out.uncorkedFrames++;
      frames.push(JSON.parse(d));
    },
    close: () => {},
    getBufferedAmount: () => 0,
    cork: (f) => {
      corked = true;
      out.corks++;
      try {
        f();
      } finally {
        corked = false;
      }
    },
  };
  const gateway = {
    handle: async ({ body, events: sink, refusal }: IncomingRequest) => {
      // A frame the socket refuses itself comes with its refusal, which the gateway answers (the guard's `refusal`).
      if (refusal) return Response.json({ error: { type: "invalid_request_error", code: refusal.code ?? null, message: refusal.message, param: refusal.param ?? null } }, { status: refusal.status });
      // The frame arrives parsed, with the bytes a native passthrough would send: both say the same.
      const sent = JSON.parse(new TextDecoder().decode(body!.bytes)) as Frame;
      expect(sent).toEqual(body!.value);
      // The bound the guard checks the size limit on (SPEC G-4) holds without serialising.
      expect(body!.maxBytes).toBeGreaterThanOrEqual(body!.bytes.byteLength);
      upstreamBodies.push(sent);
      return deliver(sink, events());
    },
  } as unknown as Gateway;
  const upgrade = new Request("http://127.0.0.1:1/v1/responses", { headers: { upgrade: "websocket" } });
  return { s: new ResponsesSocketSession(ws, { gateway, upgrade, peer: "127.0.0.1", historyLimit }), frames, upstreamBodies, out };
}

const flush = () => new Promise((r) => setTimeout(r, 20));
const say = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];

for (const named of [true, false]) {
  test(`${named ? "named events" : "bare data lines"}: every event is a frame, and the answer joins the history of previous_response_id`, async () => {
    const { s, frames, upstreamBodies, out } = session(named);
    s.message(JSON.stringify({ type: "response.create", model: "m", input: say("first") }));
    await flush();
    // The reply came in two reads: its nine frames leave in two corked writes, none on a write of its own.
    expect(out.uncorkedFrames).toBe(0);
    expect(out.corks).toBe(2);
    expect(frames.map((f) => f.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta).join("")).toBe("Hello there");

    s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: "resp_chain", input: say("second") }));
    await flush();
    expect(upstreamBodies).toHaveLength(2);
    expect(upstreamBodies[1]!.input).toEqual([...say("first"), ITEM, ...say("second")]);
    expect(upstreamBodies[1]!.previous_response_id).toBeUndefined();
    s.close();
  });
}

for (const named of [true, false]) {
  test(`${named ? "named events" : "bare data lines"}: a response that ended in response.failed cannot be named by previous_response_id`, async () => {
    const { s, frames, upstreamBodies } = session(named, undefined, true);
    s.message(JSON.stringify({ type: "response.create", model: "m", input: say("first") }));
    await flush();
    expect(frames.at(-1)).toMatchObject({ type: "response.failed", response: { id: "resp_chain" } });
    s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: "resp_chain", input: say("second") }));
    await flush();
    expect(frames.at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    expect(upstreamBodies).toHaveLength(1);
    s.close();
  });
}

test("named lifecycle events in another member order (a third-party server's) still give the response id for previous_response_id", async () => {
  // The socket reads the id from the first characters when an event begins as the gateway's encoder
  // and OpenAI begin one (`type`, `sequence_number`, `response.id`); any other shape is parsed.
  const reordered = () =>
    reply(true).map((ev) => {
      const data = JSON.parse(ev.data) as Frame;
      if (!data.response) return ev;
      const { type, sequence_number, response } = data;
      return { event: ev.event, data: JSON.stringify({ response: { status: response.status, output: response.output, id: response.id }, sequence_number, type }) };
    });
  const { s, upstreamBodies } = session(true, undefined, false, reordered);
  s.message(JSON.stringify({ type: "response.create", model: "m", input: say("first") }));
  await flush();
  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: "resp_chain", input: say("second") }));
  await flush();
  expect(upstreamBodies).toHaveLength(2);
  expect(upstreamBodies[1]!.input).toEqual([...say("first"), ITEM, ...say("second")]);
  s.close();
});

test("a frame's size bound holds for bodies that grow when serialised again (numbers, characters outside ASCII, a string input, a chained history)", async () => {
  const { s, upstreamBodies } = session(true);
  // `1e20` serialises as 21 digits; `\u00e9` (6 characters) and raw non-ASCII characters as their UTF-8.
  const numbers = `{"type":"response.create","model":"m","temperature":1e20,"metadata":{"a":[${Array(200).fill("1e20").join(",")}]},"input":"\u00e9\u20ac${"€😀".repeat(100)}"}`;
  s.message(numbers);
  await flush();
  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: "resp_chain", input: say("é€😀 ".repeat(500)) }));
  await flush();
  // The fake gateway checked maxBytes ≥ the bytes on each frame; both were served.
  expect(upstreamBodies).toHaveLength(2);
  expect(upstreamBodies[1]!.input).toHaveLength(3);
  s.close();
});

test("a socket stays open while a reply runs past the idle time, and closes as idle once it has been quiet that long", async () => {
  const closes: Array<{ code?: number; reason?: string }> = [];
  const frames: Frame[] = [];
  const ws: SocketLike = { send: (d) => frames.push(JSON.parse(d)), close: (code, reason) => closes.push({ code, reason }), cork: (f) => f(), getBufferedAmount: () => 0 };
  let release: () => void = () => {};
  const gateway = {
    handle: async ({ events }: IncomingRequest) => {
      // The reply's first events wait well past the idle time (a slow model thinking before it answers).
      release = () => void deliver(events, reply(true));
      return new Response(null, { headers: { "content-type": "text/event-stream" } });
    },
  } as unknown as Gateway;
  const upgrade = new Request("http://127.0.0.1:1/v1/responses", { headers: { upgrade: "websocket" } });
  const s = new ResponsesSocketSession(ws, { gateway, upgrade, peer: "127.0.0.1", idleMs: 40 });
  s.message(JSON.stringify({ type: "response.create", model: "m", input: say("first") }));
  await Bun.sleep(200);
  expect(closes).toEqual([]);
  release();
  await flush();
  expect(frames.at(-1)!.type).toBe("response.completed");
  for (let i = 0; i < 50 && closes.length === 0; i++) await Bun.sleep(20);
  expect(closes).toEqual([{ code: 1000, reason: "idle" }]);
});

test("previous_response_id names one of the last N responses; older ids are forgotten", async () => {
  const { s, frames, upstreamBodies } = session(true, 2);
  const say = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];
  const ids: string[] = [];
  for (const text of ["one", "two", "three"]) {
    s.message(JSON.stringify({ type: "response.create", model: "m", generate: false, input: say(text) }));
    await flush();
    ids.push(frames.findLast((f) => f.type === "response.completed")!.response.id);
  }
  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: ids[0], input: say("again") }));
  await flush();
  expect(frames.at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
  expect(upstreamBodies).toHaveLength(0);

  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: ids[2], input: say("four") }));
  await flush();
  expect(upstreamBodies).toHaveLength(1);
  expect(upstreamBodies[0]!.input.map((i: Frame) => i.content[0].text)).toEqual(["three", "four"]);
  expect(upstreamBodies[0]!.previous_response_id).toBeUndefined();
  s.close();
});

test("a batch larger than Bun's send buffer limit is held back and sent as the socket drains: no frame dropped, order kept", async () => {
  // Bun's ServerWebSocket: `send` queues past what the kernel took and returns 0 (the frame is dropped)
  // once more than its backpressureLimit (16 MiB) waits unsent; `drain` comes as the queue is written.
  const LIMIT = 16 << 20;
  let buffered = 0;
  let dropped = 0;
  const received: string[] = [];
  const ws: SocketLike = {
    send: (d) => {
      if (buffered > LIMIT) return void dropped++;
      buffered += d.length;
      received.push(d);
    },
    close: () => {},
    cork: (f) => f(),
    getBufferedAmount: () => buffered,
  };
  const text = "z".repeat(8 << 20);
  // A reply's closing events each repeat its whole text: one batch of ~32 MB.
  const closing: Frame[] = [
    { type: "response.output_text.done", sequence_number: 1, text },
    { type: "response.content_part.done", sequence_number: 2, part: { type: "output_text", text } },
    { type: "response.output_item.done", sequence_number: 3, item: { ...ITEM, content: [{ type: "output_text", text, annotations: [] }] } },
    { type: "response.completed", sequence_number: 4, response: { id: "resp_big", status: "completed", output: [] } },
  ];
  const gateway = {
    handle: async ({ events }: IncomingRequest) => {
      events!.events([{ event: "response.created", data: JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "resp_big", status: "in_progress", output: [] } }) }]);
      events!.events(closing.map((e) => ({ event: e.type, data: JSON.stringify(e) })));
      events!.end();
      return new Response(null, { headers: { "content-type": "text/event-stream" } });
    },
  } as unknown as Gateway;
  const upgrade = new Request("http://127.0.0.1:1/v1/responses", { headers: { upgrade: "websocket" } });
  const s = new ResponsesSocketSession(ws, { gateway, upgrade, peer: "127.0.0.1" });
  s.message(JSON.stringify({ type: "response.create", model: "m", input: say("long") }));
  await flush();
  // The next frame's answer waits behind the held-back ones.
  s.message(JSON.stringify({ type: "response.create", model: "m", generate: false, input: say("warm") }));
  await flush();
  for (let i = 0; i < 20 && received.length < 7; i++) {
    buffered = Math.max(0, buffered - (6 << 20)); // the kernel took 6 MB
    s.drain();
    await flush();
  }
  expect(dropped).toBe(0);
  expect(received.map((d) => JSON.parse(d).type)).toEqual([
    "response.created",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
    "response.created",
    "response.completed",
  ]);
  expect(JSON.parse(received[1]!).text).toBe(text);
  s.close();
});
