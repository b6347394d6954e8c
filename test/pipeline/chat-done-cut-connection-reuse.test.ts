/**
 * Found by a review (session 45; fixed that session; medium: hot path of the benchmarked native Chat lane). 27b19762 cancels the
 * upstream read at the first `data: [DONE]` (PassthroughDriver.cut → stream-reply.ts / commit.ts
 * `reader.cancel()`), "the connection released". When the upstream's chunked body ends (its `0\r\n\r\n`
 * terminator) in a later read than `[DONE]` (here 2 ms later: a server that flushes `[DONE]` and then
 * finishes its own work), the body is cancelled before its end and the runtime drops the connection
 * instead of keeping it for the next request: 5 streamed requests in a row open 5 upstream
 * connections (against OpenAI: a TCP and TLS handshake per request). On c4c7e180 (read to the end of
 * the body) the same 5 requests use 1 connection. With the terminator in the same write as `[DONE]`
 * (or 0 ms later) both builds use 1.
 *
 * Expected: 1 upstream connection for the 5 requests (5 before the fix). Fixed: the reader of a body cut at
 * [DONE] is cancelled 200–250 ms later (pipeline/release-after-done.ts), after its end has come.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../support/gateway.ts";
import { CHAT_SSE as SSE, gatewayOnRawUpstream, httpChunk as chunk } from "../support/raw-upstream.ts";

let opened = 0;
let requests = 0;
// A raw keep-alive HTTP/1.1 upstream: the stream in one chunk, the chunked terminator 2 ms after it.
const server = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open() {
      opened++;
    },
    async data(s, d) {
      if (!d.toString().includes("\r\n\r\n")) return; // the test's small requests arrive in one read
      requests++;
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n` + chunk(SSE));
      await Bun.sleep(2);
      s.write("0\r\n\r\n");
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

test("5 native Chat streams in a row reuse one upstream connection", async () => {
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "p/m", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const text = await res.text();
    expect([res.status, text.includes('"content":"hi"'), text.endsWith("data: [DONE]\n\n")]).toEqual([200, true, true]);
    await Bun.sleep(60); // the terminator has long arrived
  }
  expect({ requests, opened }).toEqual({ requests: 5, opened: 1 });
});
