/**
 * The Responses WebSocket answers a request as `POST /v1/responses` answers the same body (SPEC 2.5:
 * a `response.create` frame's fields are the HTTP body's), found by session 45's tryout of Codex's
 * socket and fixed that session after (each test says what it got before):
 * - a frame over `server.max_body_bytes` that names no model (or is no JSON at all) was a 400 `model`
 *   (`invalid_json`) error frame where HTTP answers the guard's 413 `request_too_large`: the socket
 *   checked the fields before the size (src/http/responses-socket.ts `handle` / `refuse`);
 * - `previous_response_id: ""` counted as absent on both transports (a translated lane dropped it, a
 *   native one forwarded it; the socket dropped it): the request was served without the conversation
 *   it meant to continue. OpenAI documents no such meaning; both now answer its 400 for an empty string
 *   (`empty_string`, naming the field: formats/openai-responses/parse.ts `previousResponseIdError`);
 * - `stream_id` was echoed whatever it was (an empty string, spaces, 300 characters); the openai SDK,
 *   the only client that sends one (Codex sends none), takes 1 to 256 of `[A-Za-z0-9_.-]`, and the
 *   socket now refuses any other value with a 400 naming it;
 * - `background: true` was served in the foreground on a translated lane and forwarded on a native
 *   one; the gateway keeps no responses to fetch later, and OpenAI's WebSocket mode takes no
 *   `background` either: both transports answer a 400 naming `background` (parse.ts `backgroundError`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

const LIMIT = 4096;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`server:\n  max_body_bytes: ${LIMIT}\n${fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** `body` over HTTP (its status and error object) and as a `response.create` frame (its frames up to the last), with the upstream calls each made. */
async function bothWays(body: Record<string, unknown>, frame: Record<string, unknown> = {}) {
  const before = gw.fake.requests.length;
  const res = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const http = { status: res.status, error: res.status === 200 ? undefined : ((await res.json()) as any).error, upstream: gw.fake.requests.length - before };
  if (res.status === 200) await res.text();
  const c = await connect(gw.url);
  try {
    const sent = gw.fake.requests.length;
    c.send({ type: "response.create", ...body, ...frame });
    const frames = await c.untilTerminal();
    return { http, frames, last: frames.at(-1), upstream: gw.fake.requests.length - sent };
  } finally {
    c.ws.close();
  }
}

test("a body over max_body_bytes that names no model: the socket's error frame is HTTP's 413 request_too_large, not a 400 for `model`", async () => {
  const { http, last, upstream } = await bothWays({ input: "x".repeat(LIMIT + 100) });
  expect(http.status).toBe(413);
  expect(http.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
  // Before the fix: {status: 400, error: {param: "model", message: "The request must name a model …"}}.
  expect(last).toEqual({ type: "error", status: 413, error: http.error });
  expect([http.upstream, upstream]).toEqual([0, 0]);
  for (const end = Date.now() + 5000; !gw.logs.some((l) => l.includes('"transport":"websocket"') && l.includes('"status":413')) && Date.now() < end; ) await Bun.sleep(10);
  const line = gw.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === "request" && l.transport === "websocket");
  expect([line?.outcome, line?.status]).toEqual(["rejected", 413]);
});

test("a frame over max_body_bytes that is no JSON object, or that a field of it would refuse, is the 413 as well (HTTP measures a body before reading it)", async () => {
  const c = await connect(gw.url);
  try {
    // Not JSON, and an array: before the fix 400 invalid_json / invalid_frame.
    for (const text of [`{"type":"response.create","input":"${"x".repeat(LIMIT + 100)}`, `[${'"x",'.repeat(LIMIT / 4)}1]`]) {
      c.ws.send(text);
      expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    }
    // A model named but a previous_response_id this socket never issued: before the fix 400 previous_response_not_found.
    c.send({ type: "response.create", model: "anth/claude-test", input: "x".repeat(LIMIT + 100), previous_response_id: "resp_unknown" });
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    // Under the limit the field's own error stands.
    c.send({ type: "response.create", model: "anth/claude-test", input: "hi", previous_response_id: "resp_unknown" });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
  } finally {
    c.ws.close();
  }
});

test('previous_response_id "" is the same 400 naming the field over HTTP and the socket, on a translated and a native lane, and nothing goes upstream', async () => {
  for (const model of ["anth/claude-test", "resp/gpt-test"]) {
    const { http, last, upstream } = await bothWays({ model, input: "and the second file?", previous_response_id: "", store: false });
    // Before the fix: HTTP 200 and the socket's response.completed, answered without any earlier conversation.
    expect({ model, status: http.status, error: http.error }).toEqual({
      model,
      status: 400,
      error: {
        type: "invalid_request_error",
        code: "empty_string",
        param: "previous_response_id",
        message: "Invalid 'previous_response_id': empty string. Expected a string with minimum length 1 (the id of an earlier response), but got an empty string instead; leave the field out to start a new conversation.",
      },
    });
    expect(last).toEqual({ type: "error", status: 400, error: http.error });
    expect({ model, upstream: [http.upstream, upstream] }).toEqual({ model, upstream: [0, 0] });
  }
});

test("background: true is the same 400 naming `background` over HTTP (streamed or not) and the socket, every lane; background: false is served", async () => {
  for (const model of ["anth/claude-test", "resp/gpt-test"]) {
    for (const stream of [false, true]) {
      const { http, last, upstream } = await bothWays({ model, input: "hi", background: true, stream, store: false });
      // Before the fix: served (a translated lane in the foreground, a native one forwarded `background`).
      expect({ model, stream, status: http.status, error: http.error }).toEqual({
        model,
        stream,
        status: 400,
        error: {
          type: "invalid_request_error",
          code: "unsupported_parameter",
          param: "background",
          message: "Background responses are not supported: the gateway keeps no responses to fetch later (GET /v1/responses/{id}). Send the request without `background` (stream it to read the reply as it comes).",
        },
      });
      expect(last).toEqual({ type: "error", status: 400, error: http.error });
      expect({ model, upstream: [http.upstream, upstream] }).toEqual({ model, upstream: [0, 0] });
    }
    const served = await bothWays({ model, input: "hi", background: false, store: false });
    expect([served.http.status, served.last.type]).toEqual([200, "response.completed"]);
  }
  const typed = await bothWays({ model: "resp/gpt-test", input: "hi", background: "yes" });
  expect(typed.http).toMatchObject({ status: 400, error: { param: "background" }, upstream: 0 });
  expect(typed.last).toEqual({ type: "error", status: 400, error: typed.http.error });
});

test("a stream_id that is no lane id (empty, a space, over 256 characters) is a 400 error frame naming stream_id, not echoed, nothing upstream; an SDK lane id is served and echoed", async () => {
  const c = await connect(gw.url);
  try {
    const before = gw.fake.requests.length;
    for (const stream_id of ["", "lane 1", "a".repeat(257), "lane/1"]) {
      c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", store: false, stream_id });
      const frame = await c.next();
      // Before the fix: the reply was served, each frame echoing the value as sent.
      expect(frame).toMatchObject({ type: "error", status: 400, error: { type: "invalid_request_error", param: "stream_id" } });
      expect(frame.error.message).toStartWith("Invalid 'stream_id': ");
      expect(frame.error.message.length).toBeLessThan(300);
      expect("stream_id" in frame).toBe(false);
    }
    expect(gw.fake.requests.length).toBe(before);
    const lane = "Lane_1.a-" + "b".repeat(247);
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", store: false, stream_id: lane });
    const frames = await c.untilTerminal();
    expect(frames.at(-1).type).toBe("response.completed");
    expect(frames.filter((f) => f.stream_id !== lane)).toEqual([]);
  } finally {
    c.ws.close();
  }
});
