/**
 * The openai SDK's own Responses WebSocket client (openai 7.59: `ResponsesWS`, and
 * `ResponsesWebSocketSession` with its lanes) against the gateway's socket (SPEC 2.5): each lane's
 * `response.create` carries its `stream_id`, and the SDK hands a lane only the events that echo it
 * (src/lib/responses/responses-websocket-session.ts `#onEvent`), so before the gateway echoed
 * `stream_id` a lane never got its reply (its finalResponse waited for ever). Lanes are served in the
 * socket's one-at-a-time order; the SDK needs no more. (`ResponsesWS` loads the `ws` package, an
 * optional peer of openai, installed here as a dependency of @google/genai.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { ResponsesWebSocketSession } from "openai/lib/responses/responses-websocket-session";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["resp", "openai-responses"], ["anth", "anthropic"]]));
});
afterAll(async () => {
  await gw?.stop();
});

test("two SDK lanes and the default lane each get their own reply; a lane goes on from another lane's response", async () => {
  const ws = new ResponsesWS(new OpenAI({ apiKey: "unused-by-a-loopback-gateway", baseURL: `${gw.url}/v1` }));
  try {
    for (const end = Date.now() + 5000; ws.socket.readyState !== 1 && Date.now() < end; ) await Bun.sleep(10);
    const session = new ResponsesWebSocketSession(ws, { maxLanes: 4, maxBufferedEvents: 1000, maxBufferedBytes: 1 << 24 });
    const a = session.lane("a");
    const b = session.lane("b");
    const main = session.lane();
    a.create({ model: "resp/gpt-test", input: "one", store: false });
    b.create({ model: "anth/claude-test", input: "two", store: false });
    main.create({ model: "resp/gpt-test", input: "three", store: false });
    const [ra, rb, rm] = await Promise.all([a.finalResponse(), b.finalResponse(), main.finalResponse()]);
    expect([ra.status, rb.status, rm.status]).toEqual(["completed", "completed", "completed"]);
    expect(ra.output_text).toBe("Hello from the fake upstream.");
    // Lane a goes on from lane b's response (a translated lane's id: the fake's native ids repeat).
    a.create({ model: "anth/claude-test", input: "and then?", previous_response_id: rb.id, store: false });
    expect((await a.finalResponse()).status).toBe("completed");
    const sent = JSON.stringify(gw.fake.requests.at(-1)!.body.messages);
    expect(sent).toContain("two");
    expect(sent).toContain("and then?");
    session.close();
  } finally {
    ws.close();
  }
});
