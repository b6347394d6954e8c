/**
 * Codex's Responses WebSocket (SPEC 2.5) with a raw WebSocket client, one test per rule: the upgrade
 * is guarded like HTTP; `response.create` frames run through the pipeline (routing, fallback before the
 * first event, translation) and the events come back as frames in SSE order; `generate: false` is
 * answered locally; `previous_response_id` within the socket; frames one at a time; a failure after
 * the first event is `response.failed`; errors before it are error frames; idle close; closing the
 * socket cancels the upstream call.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect, TERMINAL } from "../support/responses-socket.ts";
import { takesDeflateFrom } from "../../src/http/responses-socket.ts";
import { clientRequest } from "../support/fixtures.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { responseEcho } from "../../formats/openai-responses/response.ts";
import { fakeProviders } from "../support/configs.ts";

/**
 * The tests of a 17 MiB frame: building, sending and parsing it is seconds of CPU (8.5-10.7 s at load 20
 * here, over the suite's 20 s default at load 45), and it is the wait for its frames that is bounded.
 */
const BIG_FRAME_TIMEOUT_MS = 120_000;

const create = (model: string, input: unknown, extra: Record<string, unknown> = {}) => ({ type: "response.create", model, input, store: false, ...extra });
const userText = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];
const textOf = (frames: any[]) => frames.filter((f) => f.type === "response.output_text.delta").map((f) => f.delta).join("");

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
${fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]])}combos:
  - name: first-missing
    targets:
      - model: resp/missing-model
      - model: anth/claude-test
`,
  );
});
afterAll(async () => {
  await gw?.stop();
});

describe("the upgrade is guarded like HTTP", () => {
  let strict: TestGateway;
  beforeAll(async () => {
    strict = await startGateway(
      `
server: { require_api_key: true, max_body_bytes: 4096 }
${fakeProviders([["resp", "openai-responses"]])}keys:
  - name: codex
    key: env:CODEX_KEY
`,
      { env: { CODEX_KEY: "sy-ws-client-key-0001" } },
    );
  });
  afterAll(async () => {
    await strict?.stop();
  });
  const upgradeHeaders = { upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" };

  test("without a key the upgrade is a JSON 401 and no socket opens; with a key the socket serves", async () => {
    const res = await fetch(`${strict.url}/v1/responses`, { headers: upgradeHeaders });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe("invalid_api_key");
    await expect(connect(strict.url)).rejects.toThrow();
    const c = await connect(strict.url, { authorization: "Bearer sy-ws-client-key-0001" });
    c.send(create("resp/gpt-test", userText("hi")));
    const frames = await c.untilTerminal();
    expect(frames.at(-1).type).toBe("response.completed");
    c.ws.close();
  });

  test("a response.create over the body limit is a 413 error frame (SPEC G-4); the socket serves the next frame", async () => {
    const c = await connect(strict.url, { authorization: "Bearer sy-ws-client-key-0001" });
    c.send(create("resp/gpt-test", userText("x".repeat(5000))));
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    c.send(create("resp/gpt-test", userText("hi")));
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    c.ws.close();
  });

  test("a generate: false warm-up over the body limit is the same 413 error frame, though it goes nowhere upstream; under it, and after it, warm-ups are answered", async () => {
    const c = await connect(strict.url, { authorization: "Bearer sy-ws-client-key-0001" });
    const before = strict.fake.requests.length;
    c.send(create("resp/gpt-test", userText("x".repeat(5000)), { generate: false }));
    expect(await c.next()).toMatchObject({
      type: "error",
      status: 413,
      error: { type: "invalid_request_error", code: "request_too_large", message: "The request body exceeds the gateway's limit of 4096 bytes." },
    });
    c.send(create("resp/gpt-test", userText("hi"), { generate: false }));
    expect(await c.next()).toMatchObject({ type: "response.created" });
    expect(await c.next()).toMatchObject({ type: "response.completed", response: { output: [] } });
    expect(strict.fake.requests.length).toBe(before);
    c.ws.close();
  });

  test("a 17 MiB response.create (over Bun's 16 MiB frame default and the 4 KiB body limit) is a 413 error frame, not a closed socket (1009); the socket serves the next frame", async () => {
    // The socket's frame limit is set from the body limit (twice it, at least 64 MiB): a frame over the
    // body limit reaches the guard whatever the transport's default (with 4 KiB here as with 32 MiB, and
    // 17 MiB is 2.4x less to build, send and refuse than a frame over the default 32 MiB).
    const c = await connect(strict.url, { authorization: "Bearer sy-ws-client-key-0001" });
    const before = strict.fake.requests.length;
    c.send(create("resp/gpt-test", userText("y".repeat(17 * 1024 * 1024))));
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    expect(strict.fake.requests.length).toBe(before);
    c.send(create("resp/gpt-test", userText("hi")));
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    c.ws.close();
  }, BIG_FRAME_TIMEOUT_MS);

  test("a rebinding Host name is refused before the upgrade (SPEC 2.6)", async () => {
    const res = await fetch(`${strict.url}/v1/responses`, { headers: { ...upgradeHeaders, host: "attacker.example", authorization: "Bearer sy-ws-client-key-0001" } });
    expect(res.status).toBe(421);
  });

  test("GET /v1/responses without an upgrade is a JSON 405 (plain HTTP takes POST) saying it is a WebSocket path", async () => {
    const res = await fetch(`${gw.url}/v1/responses`);
    expect([res.status, res.headers.get("allow")]).toEqual([405, "POST"]);
    const error = ((await res.json()) as any).error;
    expect(error.code).toBe("method_not_allowed");
    expect(error.message).toContain("WebSocket upgrade");
  });
});

describe("permessage-deflate only off this host", () => {
  test("a loopback client that offers permessage-deflate (Bun's client does) gets a socket without it, which serves", async () => {
    const c = await connect(gw.url);
    // Without the rule Bun accepts the offer: "permessage-deflate; server_no_context_takeover; …".
    expect(c.ws.extensions).toBe("");
    c.send(create("resp/gpt-test", userText("hi")));
    const frames = await c.untilTerminal();
    expect(frames.at(-1).type).toBe("response.completed");
    expect(textOf(frames)).toBe("Hello from the fake upstream.");
    c.ws.close();
  });

  test("the extension is taken from a peer on another host (or an unknown one), never from a loopback address", () => {
    for (const peer of ["203.0.113.7", "10.0.0.2", "2001:db8::1", "::ffff:192.0.2.1", undefined]) expect(takesDeflateFrom(peer), String(peer)).toBe(true);
    for (const peer of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) expect(takesDeflateFrom(peer), peer).toBe(false);
  });
});

describe("response.create through the pipeline", () => {
  test("native Responses provider: the frames are the SSE events, in order, ending with response.completed", async () => {
    gw.fake.reset();
    const http = await fetch(`${gw.url}/v1/responses`, { method: "POST", body: JSON.stringify({ model: "resp/gpt-test", input: userText("hi"), stream: true, store: false }) });
    const sseTypes = (await http.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)).type);
    const c = await connect(gw.url);
    c.send(create("resp/gpt-test", userText("hi")));
    const frames = await c.untilTerminal();
    expect(frames.map((f) => f.type)).toEqual(sseTypes);
    expect(frames[0].type).toBe("response.created");
    expect(textOf(frames)).toBe("Hello from the fake upstream.");
    const seen = gw.fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/responses");
    expect(seen.body.stream).toBe(true);
    expect(seen.body.type).toBeUndefined();
    c.ws.close();
  });

  test("translated to Anthropic: Responses events with gap-free sequence numbers and a complete usage object", async () => {
    gw.fake.reset();
    const c = await connect(gw.url);
    c.send(create("anth/claude-test", userText("hi")));
    const frames = await c.untilTerminal();
    expect(gw.fake.requests.at(-1)!.path).toBe("/v1/messages");
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(textOf(frames)).toBe("Hello from the fake upstream.");
    const done = frames.at(-1);
    expect(done.type).toBe("response.completed");
    expect(done.response.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 });
    c.ws.close();
  });

  test("Codex's recorded request, twice (the second turn's tools found in the memo by the frame's text, docs/performance.md item 167): the echo's tools are JSON.stringify's text of the request's", async () => {
    const request = await clientRequest("codex-default.json");
    const want = JSON.stringify(responseEcho(openaiResponses.parseRequest!({ ...request, model: "anth/claude-test", stream: true })).tools);
    const c = await connect(gw.url);
    for (let turn = 0; turn < 2; turn++) {
      c.raw.length = 0;
      c.send({ type: "response.create", ...request, model: "anth/claude-test" });
      const frames = await c.untilTerminal();
      expect(frames.at(-1).type).toBe("response.completed");
      // The frames as sent: the created and the completed response carry the echo's tools as JSON.stringify writes them.
      const withTools = c.raw.filter((t) => t.startsWith('{"type":"response.created"') || t.startsWith('{"type":"response.completed"'));
      expect(withTools).toHaveLength(2);
      for (const t of withTools) expect(t).toContain(`"tools":${want},`);
    }
    c.ws.close();
  });

  test("fallback before the first event: a missing model on the first target, the reply from the second", async () => {
    gw.fake.reset();
    gw.fake.handle((req) => (req.model === "missing-model" ? { status: 404, json: { error: { message: "The model `missing-model` does not exist", type: "invalid_request_error", code: "model_not_found" } } } : undefined));
    const c = await connect(gw.url);
    c.send(create("first-missing", userText("hi")));
    const frames = await c.untilTerminal();
    gw.fake.handle(undefined);
    expect(frames[0].type).toBe("response.created");
    expect(frames.at(-1).type).toBe("response.completed");
    expect(textOf(frames)).toBe("Hello from the fake upstream.");
    expect(gw.fake.requests.map((r) => r.path)).toEqual(["/v1/responses", "/v1/messages"]);
    c.ws.close();
  });

  test("an error before any event is one error frame with the HTTP status and error body", async () => {
    const c = await connect(gw.url);
    c.send(create("nope/model", userText("hi")));
    const f = await c.next();
    expect(f).toMatchObject({ type: "error", status: 404, error: { code: "model_not_found" } });
    // The socket stays usable.
    c.send(create("resp/gpt-test", userText("hi")));
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    c.ws.close();
  });

  test("frames that are not response.create JSON objects get a 400 error frame; response.processed needs no answer", async () => {
    const c = await connect(gw.url);
    c.ws.send("{oops");
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "invalid_json" } });
    c.send({ type: "response.processed", response_id: "resp_x" });
    c.send({ type: "session.update" });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "unknown_frame_type" } });
    c.ws.close();
  });

  test("a binary frame holding a response.create is served as its text would be; one that is not JSON gets the 400 invalid_json", async () => {
    const c = await connect(gw.url);
    c.ws.send(new TextEncoder().encode(JSON.stringify(create("resp/gpt-test", userText("hi")))));
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    c.ws.send(new TextEncoder().encode("{oops"));
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "invalid_json" } });
    c.ws.close();
  });

  test("an `input` that is not a string or an array is the HTTP route's 400 (param input), not an empty conversation sent upstream", async () => {
    // Found trying bad input in each client format: over HTTP a 400; over the socket the frame went
    // upstream as `input: []` and came back as a completed response to a question nobody asked.
    gw.fake.reset();
    const c = await connect(gw.url);
    for (const [model, input] of [["resp/gpt-test", 42], ["anth/claude-test", true], ["resp/gpt-test", { role: "user", content: "hi" }]] as const) {
      c.send(create(model, input));
      expect(await c.next()).toEqual({ type: "error", status: 400, error: { type: "invalid_request_error", code: null, message: "`input` must be a string or an array of input items.", param: "input" } });
      c.send(create(model, input, { generate: false }));
      expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { param: "input" } });
    }
    expect(gw.fake.requests).toHaveLength(0);
    // The socket goes on: a string input is served.
    c.send(create("resp/gpt-test", "hi"));
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    c.ws.close();
  });

  test("a frame nested 30,000 deep gets a 400 error frame naming the depth limit; the socket goes on", async () => {
    gw.fake.reset();
    const c = await connect(gw.url);
    const deep = "[".repeat(30_000) + "]".repeat(30_000);
    c.ws.send(JSON.stringify(create("resp/gpt-test", userText("hi"))).replace(/}$/, `,"metadata":${deep}}`));
    const err = await c.next();
    expect(err).toMatchObject({ type: "error", status: 400, error: { code: "invalid_json" } });
    expect(JSON.stringify(err)).toContain("more than 1000 levels deep");
    expect(gw.fake.requests.length).toBe(0);
    c.send(create("resp/gpt-test", userText("hi")));
    expect(textOf(await c.untilTerminal())).toBe("Hello from the fake upstream.");
    c.ws.close();
  });
});

describe("generate: false and previous_response_id", () => {
  test("a warm-up is answered at once with an empty completed response and no upstream call", async () => {
    gw.fake.reset();
    const c = await connect(gw.url);
    c.send(create("resp/gpt-test", userText("hi"), { generate: false }));
    const frames = await c.untilTerminal();
    expect(frames.map((f) => f.type)).toEqual(["response.created", "response.completed"]);
    expect(frames[1].response).toMatchObject({ status: "completed", output: [], usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } });
    expect(frames[1].response.id).toMatch(/^resp_/);
    expect(gw.fake.requests).toHaveLength(0);
    c.ws.close();
  });

  test("a follow-up naming an earlier response of the socket sends the full history upstream, without the id", async () => {
    gw.fake.reset();
    const c = await connect(gw.url);
    c.send(create("anth/claude-test", userText("first"), { generate: false }));
    const warm = (await c.untilTerminal()).at(-1).response.id;
    c.send(create("anth/claude-test", [], { previous_response_id: warm }));
    const first = (await c.untilTerminal()).at(-1).response.id;
    c.send(create("anth/claude-test", userText("second"), { previous_response_id: first }));
    await c.untilTerminal();
    const sent = gw.fake.requests.at(-1)!.body;
    expect(sent.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "assistant", content: [{ type: "text", text: "Hello from the fake upstream." }] },
      { role: "user", content: [{ type: "text", text: "second" }] },
    ]);
    // To a Responses provider the field is gone too.
    c.send(create("resp/gpt-test", userText("third"), { previous_response_id: first }));
    await c.untilTerminal();
    expect(gw.fake.requests.at(-1)!.body.previous_response_id).toBeUndefined();
    expect(gw.fake.requests.at(-1)!.body.input).toHaveLength(3);
    c.ws.close();
  });

  test("an id the socket never issued is a 400 error frame; another socket's ids are unknown too", async () => {
    const a = await connect(gw.url);
    a.send(create("resp/gpt-test", userText("hi")));
    const id = (await a.untilTerminal()).at(-1).response.id;
    const b = await connect(gw.url);
    b.send(create("resp/gpt-test", userText("more"), { previous_response_id: id }));
    expect(await b.next()).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    a.ws.close();
    b.ws.close();
  });
});

describe("one frame at a time, failures, closing", () => {
  test("a second frame sent at once waits until the first response is complete", async () => {
    gw.fake.reset();
    const c = await connect(gw.url);
    // When the second request reaches the provider, the client must already hold the first's terminal event.
    let firstDoneWhenSecondArrived: boolean | undefined;
    gw.fake.handle((req) => {
      if (req.path === "/v1/responses") return { ...simpleReply("openai-responses", { text: "first reply" }, true), headers_delay_ms: 200 };
      firstDoneWhenSecondArrived = c.frames.some((f) => f.type === "response.completed");
      return undefined;
    });
    c.send(create("resp/gpt-test", userText("one")));
    c.send(create("anth/claude-test", userText("two")));
    const one = await c.untilTerminal();
    const two = await c.untilTerminal();
    gw.fake.handle(undefined);
    expect(textOf(one)).toBe("first reply");
    expect(textOf(two)).toBe("Hello from the fake upstream.");
    const oneId = one.at(-1).response.id;
    expect(one.filter((f) => f.response).every((f) => f.response.id === oneId)).toBe(true);
    expect(two[0].type).toBe("response.created");
    expect(two[0].response.id).not.toBe(oneId);
    expect(firstDoneWhenSecondArrived).toBe(true);
    c.ws.close();
  });

  test("a reply cut off after the first event ends with one response.failed frame", async () => {
    gw.fake.reset();
    const sse =
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n` +
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}}\n\n`;
    gw.fake.enqueue({ sse });
    const c = await connect(gw.url);
    c.send(create("anth/claude-test", userText("hi")));
    const frames = await c.untilTerminal();
    expect(textOf(frames)).toBe("Partial");
    // `response.failed` alone (status failed, the error object); the SSE stream's `error` event before
    // it is not sent on the socket (formats/openai-responses/encoder.ts).
    expect(frames.at(-2)).toMatchObject({ type: "response.output_text.delta" });
    expect(frames.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: "The upstream stream ended before the reply was complete." } } });
    expect(frames.filter((f) => TERMINAL.has(f.type))).toHaveLength(1);
    c.ws.close();
  });

  test("closing the socket mid-reply cancels the upstream call", async () => {
    gw.fake.reset();
    const head =
      `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n` +
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n` +
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Streaming"}}\n\n`;
    gw.fake.enqueue({ sse: head + "event: ping\ndata: {}\n\n", stall_after_bytes: new TextEncoder().encode(head).length });
    const c = await connect(gw.url);
    c.send(create("anth/claude-test", userText("hi")));
    for (;;) if ((await c.next()).type === "response.output_text.delta") break;
    c.ws.close();
    while (gw.fake.aborted === 0) await Bun.sleep(20); // the test's timeout bounds the wait
    expect(gw.fake.aborted).toBe(1);
  });

  // A gateway of its own with a short idle time: the others keep the default (10 min), as a 17 MiB
  // frame that took a loaded machine longer than a short idle time to send was closed as idle first.
  test("an idle socket is closed (code 1000, reason idle)", async () => {
    const idle = await startGateway(`providers:\n  - id: anth\n    kind: anthropic\n    base_url: "{{FAKE}}"\n`, { responsesSocketIdleMs: 300 });
    try {
      const c = await connect(idle.url);
      const closed = await c.closed;
      expect(closed).toEqual({ code: 1000, reason: "idle" });
    } finally {
      await idle.stop();
    }
  });

  test("the idle time is the config's server.websocket_idle_timeout_ms, read as each socket opens (a reload applies to the next socket)", async () => {
    const idle = await startGateway(`server: { websocket_idle_timeout_ms: 1000 }\nproviders:\n  - id: anth\n    kind: anthropic\n    base_url: "{{FAKE}}"\n`);
    try {
      let opened = Date.now();
      const c = await connect(idle.url);
      expect(await c.closed).toEqual({ code: 1000, reason: "idle" });
      // Not before the configured time (the default would be 10 min; a timer fires no earlier than set).
      expect(Date.now() - opened).toBeGreaterThanOrEqual(990);
      writeFileSync(idle.configPath, `server: { websocket_idle_timeout_ms: 1500 }\nproviders:\n  - id: anth\n    kind: anthropic\n    base_url: "${idle.fake.url}"\n`);
      const reload = await fetch(`${idle.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${idle.app.adminToken}` } });
      expect(reload.status, await reload.text()).toBe(200);
      opened = Date.now();
      const d = await connect(idle.url);
      expect(await d.closed).toEqual({ code: 1000, reason: "idle" });
      expect(Date.now() - opened).toBeGreaterThanOrEqual(1490);
    } finally {
      await idle.stop();
    }
  });
});

describe("large frames (SPEC G-4: the body limit, not the transport's, decides)", () => {
  test("a 17 MiB response.create (over Bun's 16 MiB frame default, under the 32 MiB body limit) is served like over HTTP", async () => {
    const c = await connect(gw.url);
    const big = "x".repeat(17 * 1024 * 1024);
    c.send(create("resp/gpt-test", userText(big)));
    const frames = await c.untilTerminal();
    expect(frames.at(-1).type).toBe("response.completed");
    expect(gw.fake.requests.at(-1)!.body.input[0].content[0].text.length).toBe(big.length);
    c.ws.close();
  }, BIG_FRAME_TIMEOUT_MS);

  // A frame over the body limit and over Bun's default: "the upgrade is guarded like HTTP" (17 MiB against 4 KiB).
});
