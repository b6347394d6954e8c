/**
 * A Responses WebSocket frame's size is measured as received (SPEC G-4): its UTF-8 bytes against
 * `server.max_body_bytes`, as the HTTP route measures the body it reads. Found in the review of session
 * 46: the socket measured the frame's body re-serialised compactly (`JSON.stringify` of the frame
 * without `type`, `stream_id`, `previous_response_id`, `generate`), so a frame over the limit by its
 * JSON whitespace or a long `previous_response_id` was judged on its fields (a 400 naming `model`, where
 * the same bytes POSTed to /v1/responses get 413 `request_too_large`), and with a model named it was
 * served. The frame's envelope (`"type":"response.create",`) counts: a frame is measured whole.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

const LIMIT = 4096;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`server:\n  max_body_bytes: ${LIMIT}\n${fakeProviders([["anth", "anthropic"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** The status and error code HTTP answers for `body` as POST /v1/responses. */
async function overHttp(body: string) {
  const res = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, code: ((await res.json()) as any).error?.code };
}

test("a frame over max_body_bytes by its whitespace, naming no model: 413 as over HTTP", async () => {
  const pad = " ".repeat(LIMIT + 100);
  expect(await overHttp(`{${pad}"input":"hi"}`)).toEqual({ status: 413, code: "request_too_large" });
  const c = await connect(gw.url);
  try {
    c.ws.send(`{"type":"response.create",${pad}"input":"hi"}`);
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
  } finally {
    c.ws.close();
  }
});

test("a frame over max_body_bytes by its previous_response_id, naming no model: 413 as over HTTP", async () => {
  const body = { input: "hi", previous_response_id: "r".repeat(LIMIT + 100) };
  expect(await overHttp(JSON.stringify(body))).toEqual({ status: 413, code: "request_too_large" });
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", ...body });
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
  } finally {
    c.ws.close();
  }
});

test("a frame naming a model, over max_body_bytes by its whitespace and multi-byte text (under it in characters): 413, no upstream call; the same frame under the limit is served", async () => {
  const frame = (pad: number) => `{"type":"response.create","model":"anth/claude-x",${" ".repeat(pad)}"input":"${"é".repeat(1100)}"}`;
  const over = frame(2000);
  expect([over.length < LIMIT, Buffer.byteLength(over) > LIMIT, JSON.stringify(JSON.parse(over)).length < LIMIT]).toEqual([true, true, true]);
  expect(await overHttp(over.replace('"type":"response.create",', ""))).toEqual({ status: 413, code: "request_too_large" });
  gw.fake.reset();
  const c = await connect(gw.url);
  try {
    c.ws.send(over);
    expect(await c.next()).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    expect(gw.fake.requests).toEqual([]);
    const under = frame(1600);
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(LIMIT);
    c.ws.send(under);
    const frames = await c.untilTerminal();
    expect(frames.at(-1).type).toBe("response.completed");
    expect(gw.fake.requests.map((r) => r.model)).toEqual(["claude-x"]);
  } finally {
    c.ws.close();
  }
});
