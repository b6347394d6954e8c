/**
 * Found by a tryout (Codex over the Responses WebSocket, SPEC 2.5; SPEC O-4: one log line per request):
 * a request the socket itself refuses before it reaches the gateway — a frame that is not JSON, a
 * `response.create` whose `previous_response_id` the socket does not know, one whose `input` is neither
 * a string nor an array — gets its error frame, but leaves no request log line and no count in
 * `switchyard_requests_total`, unlike the same request over HTTP (`POST /v1/responses` with a body that
 * is not JSON: a 400, a `"msg":"request"` line with outcome `rejected`, counted under
 * `outcome="rejected"`). A Codex session stuck on `previous_response_not_found` (it then resends the
 * whole conversation) or on refused frames is invisible in the log, Calls and /metrics.
 *
 * Where: src/http/responses-socket.ts `handle` answers these with `errorFrame` and returns before
 * `gateway.handle`, which is what writes the log line, the metrics and the call.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["resp", "openai-responses"]]));
});
afterAll(async () => {
  await gw?.stop();
});

const requestLines = () => gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
const rejectedCount = async () => {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('switchyard_requests_total{endpoint="responses",provider="none",outcome="rejected"}'));
  return line ? Number(line.split(" ").at(-1)) : 0;
};

test("over HTTP, a body that is not JSON is a 400 with a request log line and a rejected count (the reference)", async () => {
  const before = requestLines().length;
  const res = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
  expect(res.status).toBe(400);
  await res.text();
  for (const end = Date.now() + 5000; requestLines().length === before && Date.now() < end; ) await Bun.sleep(10);
  expect(requestLines().slice(before).map((l) => [l.outcome, l.status])).toEqual([["rejected", 400]]);
});

test("over the WebSocket, each frame the socket refuses gets a request log line (transport websocket, rejected, its status) and is counted", async () => {
  const before = requestLines().length;
  const rejectedBefore = await rejectedCount();
  const c = await connect(gw.url);
  try {
    c.ws.send("{not json");
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "invalid_json" } });
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", previous_response_id: "resp_never_issued", store: false });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    c.send({ type: "response.create", model: "resp/gpt-test", input: 5, store: false });
    expect(await c.next()).toMatchObject({ type: "error", status: 400, error: { param: "input" } });
    // A request the socket serves, after them: its log line shows the log is written.
    c.send({ type: "response.create", model: "resp/gpt-test", input: "hi", store: false });
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
  } finally {
    c.ws.close();
  }
  for (const end = Date.now() + 5000; !requestLines().slice(before).some((l) => l.outcome === "ok") && Date.now() < end; ) await Bun.sleep(10);
  const lines = requestLines().slice(before).map((l) => [l.transport, l.outcome, l.status]);
  // Today: only [["websocket", "ok", 200]]: the three refusals left no line.
  expect(lines).toEqual([
    ["websocket", "rejected", 400],
    ["websocket", "rejected", 400],
    ["websocket", "rejected", 400],
    ["websocket", "ok", 200],
  ]);
  expect((await rejectedCount()) - rejectedBefore).toBe(3);
});
