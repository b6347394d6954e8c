/**
 * Found by a tryout of the Responses WebSocket (SPEC 2.5: each `response.create` frame's fields are the
 * HTTP body's; the reply's events go back in the shape the SSE stream would carry them). OpenAI's
 * WebSocket mode has lanes: a `response.create` may carry `stream_id`, which is WebSocket-only — "not
 * part of `POST /v1/responses`" — and "events for the response echo the same `stream_id`"
 * (node_modules/openai/resources/responses/responses.d.ts, `ResponsesClientEvent.ResponseCreate.stream_id`,
 * openai 7.59). The openai SDK's `ResponsesWebSocketSession.lane(id)` sends it and routes each event to
 * a lane by the event's own `stream_id` (src/lib/responses/responses-websocket-session.ts `#onEvent`):
 * an event without it goes to the default lane, so the lane that asked never gets its reply.
 *
 * Until this fix the socket treated `stream_id` as a body field: it goes upstream in the HTTP body of a native
 * `openai-responses` call (where OpenAI's `POST /v1/responses` does not take it), and no event carried
 * it back. Codex 0.171 sends no `stream_id` (not in its binary): this is an SDK client's problem.
 *
 * Where: src/http/responses-socket.ts `handle` (the envelope's `type`, `generate` and
 * `previous_response_id` are taken out of the body, `stream_id` is not) and the sink in `run` (the
 * events are sent as the upstream's data, untagged).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["resp", "openai-responses"], ["anth", "anthropic"]]));
});
afterAll(async () => {
  await gw?.stop();
});

test("stream_id, a field of the WebSocket envelope, is not sent upstream in the HTTP body", async () => {
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", store: false, stream_id: "lane-1" });
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    // Before the fix: the native call's body carried "stream_id":"lane-1".
    expect(Object.keys(gw.fake.requests.at(-1)!.body)).not.toContain("stream_id");
  } finally {
    c.ws.close();
  }
});

test("every event of a reply to a response.create with stream_id echoes it (native and translated lanes)", async () => {
  const c = await connect(gw.url);
  try {
    for (const model of ["resp/gpt-test", "anth/claude-test"]) {
      c.send({ type: "response.create", model, input: "hi", store: false, stream_id: "lane-1" });
      const frames = await c.untilTerminal();
      expect(frames.at(-1).type).toBe("response.completed");
      // Before the fix: no frame carried stream_id.
      expect({ model, untagged: frames.filter((f) => f.stream_id !== "lane-1").map((f) => f.type) }).toEqual({ model, untagged: [] });
    }
  } finally {
    c.ws.close();
  }
});

test("a lane's error frame, its warm-up's events and a refusal carry its stream_id; a frame without one gets untagged frames", async () => {
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", previous_response_id: "resp_unknown", store: false, stream_id: "lane-2" });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, stream_id: "lane-2", error: { code: "previous_response_not_found" } });
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", generate: false, stream_id: "lane-3" });
    expect(await c.next()).toMatchObject({ type: "response.created", stream_id: "lane-3" });
    const warm = await c.next();
    expect(warm).toMatchObject({ type: "response.completed", stream_id: "lane-3" });
    // A lane's response can be chained from another lane (the SDK: stream_id routes, previous_response_id chains).
    c.send({ type: "response.create", model: "anth/claude-test", input: "go on", previous_response_id: warm.response.id, store: false });
    const untagged = await c.untilTerminal();
    expect(untagged.at(-1).type).toBe("response.completed");
    expect(untagged.filter((f) => "stream_id" in f)).toEqual([]);
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", stream_id: 7 });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { param: "stream_id" } });
  } finally {
    c.ws.close();
  }
});

test("two lanes' requests sent together are served one after the other, each frame tagged with its own lane", async () => {
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "resp/gpt-test", input: "one", store: false, stream_id: "a" });
    c.send({ type: "response.create", model: "anth/claude-test", input: "two", store: false, stream_id: "b" });
    const first = await c.untilTerminal();
    const second = await c.untilTerminal();
    expect([...new Set(first.map((f) => f.stream_id))]).toEqual(["a"]);
    expect([...new Set(second.map((f) => f.stream_id))]).toEqual(["b"]);
    expect([first.at(-1).type, second.at(-1).type]).toEqual(["response.completed", "response.completed"]);
  } finally {
    c.ws.close();
  }
});
