/**
 * Found by a tryout (Codex over the Responses WebSocket, SPEC 2.5): a `response.create` whose
 * `previous_response_id` is not a string (a number, an object; `""` too) is served as if it named no
 * earlier response: the field is dropped, the request goes upstream without the conversation it
 * pointed at, and the model answers out of context with no error and no warning. The same body over
 * HTTP (`POST /v1/responses`, `"previous_response_id": 42`) is a 400 "Invalid 'previous_response_id':
 * Invalid type: Expected string but received 42" (`param: "previous_response_id"`), as OpenAI's API
 * answers it, and the socket refuses an id it does not know
 * (400 `previous_response_not_found`); a client bug that sends the wrong type should get the same
 * kind of answer, not a reply that silently forgot the conversation.
 *
 * Where: src/http/responses-socket.ts `handle` (`typeof previous_response_id === "string" &&
 * previous_response_id.length > 0`, else the field was dropped without a word). Now the socket answers
 * the HTTP route's 400 for a translated lane's body (formats/openai-responses/parse.ts
 * `previousResponseIdError`), whatever the provider: the socket reads the id itself.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]]));
});
afterAll(async () => {
  await gw?.stop();
});

test("a previous_response_id that is not a string is a 400 error frame naming the field, and nothing goes upstream", async () => {
  const c = await connect(gw.url);
  try {
    const upstreamBefore = gw.fake.requests.length;
    c.send({ type: "response.create", model: "anth/claude-test", input: "and the second file?", previous_response_id: 42, store: false });
    const frames = await c.untilTerminal();
    // Before the fix: response.created … response.completed, the request sent upstream without any history.
    expect(frames.at(-1)).toMatchObject({ type: "error", status: 400, error: { type: "invalid_request_error", param: "previous_response_id" } });
    expect(gw.fake.requests.length).toBe(upstreamBefore);
  } finally {
    c.ws.close();
  }
});

test("the same 400 as HTTP on a native lane too (whose HTTP route would forward the field), with its log line", async () => {
  const http = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "anth/claude-test", input: "hi", previous_response_id: { id: 1 } }) });
  expect(http.status).toBe(400);
  const httpError = ((await http.json()) as any).error;
  const c = await connect(gw.url);
  try {
    const upstreamBefore = gw.fake.requests.length;
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", previous_response_id: { id: 1 }, store: false });
    const frame = await c.next();
    expect(frame).toMatchObject({ type: "error", status: 400 });
    expect(frame.error).toEqual(httpError);
    expect(gw.fake.requests.length).toBe(upstreamBefore);
  } finally {
    c.ws.close();
  }
  for (const end = Date.now() + 5000; !gw.logs.some((l) => l.includes('"transport":"websocket"') && l.includes('"status":400')) && Date.now() < end; ) await Bun.sleep(10);
  const line = gw.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === "request" && l.transport === "websocket");
  expect([line?.outcome, line?.status, line?.model]).toEqual(["rejected", 400, "resp/gpt-test"]);
});
