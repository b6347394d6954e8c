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
 * previous_response_id.length > 0`, else the field is dropped without a word).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["anth", "anthropic"]]));
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
    // Today: response.created … response.completed, the request sent upstream without any history.
    expect(frames.at(-1)).toMatchObject({ type: "error", status: 400, error: { type: "invalid_request_error", param: "previous_response_id" } });
    expect(gw.fake.requests.length).toBe(upstreamBefore);
  } finally {
    c.ws.close();
  }
});
