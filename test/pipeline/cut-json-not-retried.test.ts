/**
 * Found by a review (session 45; fixed that session). Since 9a5277ed a 2xx the gateway cannot read (pipeline/commit-failures.ts
 * unusableReply: UNREADABLE_CODES, upstream_invalid_json among them) takes the empty-reply row: no
 * same-account retry, no other account, the next target. A JSON reply whose body is cut short by a
 * connection the upstream closes without a Content-Length (a close-delimited body, HTTP/1.1 §6.3: the
 * gateway cannot tell it from a finished one) is read as "not valid JSON" and now fails at once: the
 * client gets 502 upstream_invalid_json "a reply the gateway cannot use" after one call. On c4c7e180 the
 * same reply was a 5xx-row failure retried on the same account, and the retry served it (200 after 2
 * calls). A stream cut after some bytes keeps the 5xx row (commit-failures.ts); a whole JSON body cut
 * mid-way does not. The same reply with a Content-Length is a transport failure and still retried.
 *
 * Expected: a body that ends inside a JSON value (a cut, not a page or another shape) is retried as a
 * cut stream is: 200 after 2 calls. Before the fix: 502 after 1 call.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../support/gateway.ts";
import { gatewayOnRawUpstream } from "../support/raw-upstream.ts";

const FULL = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "hello there" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
});
let calls = 0;
/** The first reply's body (then FULL), close-delimited. */
let firstBody = FULL.slice(0, 60);
// A raw HTTP/1.1 server: the first reply's body is cut after 60 bytes and the connection closed (no Content-Length).
const server = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    data(s) {
      calls++;
      const body = calls === 1 ? firstBody : FULL;
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
      s.end();
    },
  },
});

let gw: TestGateway;
beforeAll(async () => {
  gw = await gatewayOnRawUpstream(server.port);
});
afterAll(async () => {
  await gw?.stop();
  server.stop(true);
});

test("a JSON reply cut mid-body by a clean close is retried on the same account, as a cut stream is", async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "p/m", messages: [{ role: "user", content: "hi" }] }),
  });
  const body = await res.text();
  expect({ status: res.status, calls, text: body.includes("hello there") }).toEqual({ status: 200, calls: 2, text: true });
});

test("a BOM and whitespace before the cut JSON: retried the same way", async () => {
  calls = 0;
  firstBody = `\ufeff \n${FULL.slice(0, 100)}`;
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "p/m", messages: [{ role: "user", content: "hi" }] }),
  });
  const body = await res.text();
  expect({ status: res.status, calls, text: body.includes("hello there") }).toEqual({ status: 200, calls: 2, text: true });
});

for (const [name, cut] of [
  ["garbage after a brace", "{hello there"],
  ["a complete JSON value with more after it", `${FULL}x`],
  ["a plain text", "hello there, the answer is"],
  ["a number no more bytes could finish (`1.e`: a fraction with no digit; session 46)", '{"id":"chatcmpl-1","created":1.e'],
] as const) {
  test(`${name} stays unusable: one call, upstream_invalid_json`, async () => {
    calls = 0;
    firstBody = cut;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "p/m", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = (await res.json()) as { error?: { code?: string } };
    expect({ status: res.status, calls, code: body.error?.code }).toEqual({ status: 502, calls: 1, code: "upstream_invalid_json" });
  });
}
