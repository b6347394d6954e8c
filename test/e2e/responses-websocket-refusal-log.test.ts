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
 * Where: src/http/responses-socket.ts `handle` answered these with `errorFrame` and returned before
 * `gateway.handle`, which is what writes the log line, the metrics and the call. It now hands each
 * refusal to the gateway as the request's own (IncomingRequest `refusal`). A refused upgrade (401: no
 * key, a wrong one) likewise: the gateway answers it as it answers POST /v1/responses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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
  // Before the fix: only [["websocket", "ok", 200]]: the three refusals left no line.
  expect(lines).toEqual([
    ["websocket", "rejected", 400],
    ["websocket", "rejected", 400],
    ["websocket", "rejected", 400],
    ["websocket", "ok", 200],
  ]);
  expect((await rejectedCount()) - rejectedBefore).toBe(3);
  // …and a Calls row each, under the socket's transport, with the model the frame named when it named one.
  const ids = new Set(requestLines().slice(before).map((l) => l.requestId));
  let calls: any[] = [];
  for (const end = Date.now() + 5000; calls.length < 4 && Date.now() < end; await Bun.sleep(20)) {
    const body = (await (await fetch(`${gw.url}/admin/api/calls?transport=websocket&limit=100`)).json()) as { calls: any[] };
    calls = body.calls.filter((c) => ids.has(c.requestId));
  }
  expect(calls.map((c) => [c.outcome, c.status, c.requestedModel]).sort()).toEqual([["ok", 200, "resp/gpt-test"], ["rejected", 400, ""], ["rejected", 400, "resp/gpt-test"], ["rejected", 400, "resp/gpt-test"]]);
});

describe("with client keys required", () => {
  let strict: TestGateway;
  beforeAll(async () => {
    strict = await startGateway(
      `
server: { require_api_key: true, max_body_bytes: 4096 }
${fakeProviders([["resp", "openai-responses"]])}keys:
  - name: codex
    key: env:CODEX_KEY
`,
      { env: { CODEX_KEY: "sy-ws-refusal-key-0001" } },
    );
  });
  afterAll(async () => {
    await strict?.stop();
  });
  const lines = () => strict.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
  const rejected = async () => {
    const text = await (await fetch(`${strict.url}/metrics`, { headers: { authorization: "Bearer sy-ws-refusal-key-0001" } })).text();
    const line = text.split("\n").find((l) => l.startsWith('switchyard_requests_total{endpoint="responses",provider="none",outcome="rejected"}'));
    return line ? Number(line.split(" ").at(-1)) : 0;
  };
  const upgrade = { upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" };
  const waitFor = async (n: number, before: number) => {
    for (const end = Date.now() + 5000; lines().length < before + n && Date.now() < end; ) await Bun.sleep(10);
  };

  test("an upgrade refused for its key (none, a wrong one) is the 401 POST /v1/responses gets, with the same log line and count", async () => {
    const before = lines().length;
    const rejectedBefore = await rejected();
    const overHttp = await fetch(`${strict.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "resp/gpt-test", input: "hi" }) });
    const noKey = await fetch(`${strict.url}/v1/responses`, { headers: upgrade });
    const wrongKey = await fetch(`${strict.url}/v1/responses`, { headers: { ...upgrade, authorization: "Bearer sy-not-a-key" } });
    const httpBody = (await overHttp.json()) as any;
    expect([overHttp.status, noKey.status, wrongKey.status]).toEqual([401, 401, 401]);
    expect(((await noKey.json()) as any).error).toEqual(httpBody.error);
    expect(((await wrongKey.json()) as any).error.code).toBe("invalid_api_key");
    expect(noKey.headers.get("www-authenticate")).toBe(overHttp.headers.get("www-authenticate"));
    await waitFor(3, before);
    expect(lines().slice(before).map((l) => [l.transport ?? "http", l.outcome, l.status, l.code])).toEqual([
      ["http", "rejected", 401, "invalid_api_key"],
      ["websocket", "rejected", 401, "invalid_api_key"],
      ["websocket", "rejected", 401, "invalid_api_key"],
    ]);
    expect((await rejected()) - rejectedBefore).toBe(3);
  });

  test("an upgrade with a disabled key is the 403 POST /v1/responses gets, recorded under the key (Calls by key)", async () => {
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`${strict.url}/admin/api${path}`, { ...init, headers: { "content-type": "application/json", authorization: `Bearer ${strict.app.adminToken}` } });
    const made = (await (await admin("/keys", { method: "POST", body: JSON.stringify({ name: "dora" }) })).json()) as any;
    const secret: string = made.secret;
    expect(typeof secret).toBe("string");
    expect((await admin("/keys/dora/disable", { method: "POST" })).status).toBe(200);
    const overHttp = await fetch(`${strict.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${secret}` }, body: JSON.stringify({ model: "resp/gpt-test", input: "hi" }) });
    const overSocket = await fetch(`${strict.url}/v1/responses`, { headers: { ...upgrade, authorization: `Bearer ${secret}` } });
    expect([overHttp.status, overSocket.status]).toEqual([403, 403]);
    expect(((await overSocket.json()) as any).error).toEqual(((await overHttp.json()) as any).error);
    let calls: any[] = [];
    for (const end = Date.now() + 5000; calls.length < 2 && Date.now() < end; await Bun.sleep(20)) calls = ((await (await admin("/calls?key=dora")).json()) as any).calls;
    expect(calls.map((c) => [c.transport, c.outcome, c.status]).sort()).toEqual([["http", "rejected", 403], ["websocket", "rejected", 403]]);
  });

  test("a generate: false warm-up over the body limit is logged and counted as the 413 it gets, with its model", async () => {
    const c = await connect(strict.url, { authorization: "Bearer sy-ws-refusal-key-0001" });
    const before = lines().length;
    const rejectedBefore = await rejected();
    try {
      c.send({ type: "response.create", model: "resp/gpt-test", input: "x".repeat(5000), generate: false });
      expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    } finally {
      c.ws.close();
    }
    await waitFor(1, before);
    expect(lines().slice(before).map((l) => [l.transport, l.outcome, l.status, l.model])).toEqual([["websocket", "rejected", 413, "resp/gpt-test"]]);
    expect((await rejected()) - rejectedBefore).toBe(1);
  });
});
