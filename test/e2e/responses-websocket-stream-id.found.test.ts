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
 * Today the socket treats `stream_id` as a body field: it goes upstream in the HTTP body of a native
 * `openai-responses` call (where OpenAI's `POST /v1/responses` does not take it), and no event carries
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
    // Today: the native call's body carries "stream_id":"lane-1".
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
      // Today: no frame carries stream_id.
      expect({ model, untagged: frames.filter((f) => f.stream_id !== "lane-1").map((f) => f.type) }).toEqual({ model, untagged: [] });
    }
  } finally {
    c.ws.close();
  }
});
