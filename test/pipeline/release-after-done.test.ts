/**
 * A Chat upstream that keeps its connection open after `data: [DONE]` (keep-alive comments, no chunked
 * end): the client's reply ends at `[DONE]` at once with nothing after it, and the gateway lets go of
 * the upstream connection within its bound (pipeline/release-after-done.ts RELEASE_AFTER_DONE_MS,
 * 200 ms, cancelled on the next sweep) — for a native Chat client and a translated (Messages) one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../support/gateway.ts";
import { CHAT_SSE as SSE, gatewayOnRawUpstream, httpChunk as chunk } from "../support/raw-upstream.ts";
import { readersAwaitingRelease, RELEASE_AFTER_DONE_MS } from "../../pipeline/release-after-done.ts";

/** When (performance.now()) each upstream connection closed. */
const closedAt: number[] = [];
let opened = 0;
// A raw HTTP/1.1 upstream that, after [DONE], sends a keep-alive comment every 20 ms and never ends its body.
const server = Bun.listen<{ timer?: ReturnType<typeof setInterval> }>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open() {
      opened++;
    },
    data(s, d) {
      if (!d.toString().includes("\r\n\r\n")) return;
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n` + chunk(SSE));
      s.data = { timer: setInterval(() => s.write(chunk(": keep-alive\n\n")), 20) };
    },
    close(s) {
      clearInterval(s.data?.timer);
      closedAt.push(performance.now());
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

/** The reply's text, when it ended, and when the upstream connection closed after it (ms from the reply's end). */
async function oneReply(path: string, body: unknown): Promise<{ text: string; status: number; closedAfterMs: number }> {
  const before = closedAt.length;
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
  const text = await res.text();
  const endedAt = performance.now();
  for (let i = 0; i < 100 && closedAt.length === before; i++) await Bun.sleep(20);
  return { text, status: res.status, closedAfterMs: closedAt.length > before ? Math.round(closedAt.at(-1)! - endedAt) : -1 };
}

test("native Chat: the reply ends at [DONE] with nothing after it; the open upstream is let go within the bound", async () => {
  const r = await oneReply("/v1/chat/completions", { model: "p/m", stream: true, messages: [{ role: "user", content: "hi" }] });
  expect([r.status, r.text.includes('"content":"hi"'), r.text.endsWith("data: [DONE]\n\n"), r.text.includes("keep-alive")]).toEqual([200, true, true, false]);
  expect(r.closedAfterMs).toBeGreaterThanOrEqual(0);
  // the bound plus one sweep period (50 ms) and room for a loaded machine; before the bound there was no wait at all
  expect(r.closedAfterMs).toBeLessThan(RELEASE_AFTER_DONE_MS + 50 + 400);
  expect(readersAwaitingRelease()).toBe(0);
});

test("Messages client ← Chat: the reply ends with message_stop; the open upstream is let go within the bound", async () => {
  const r = await oneReply("/v1/messages", { model: "p/m", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
  expect([r.status, r.text.includes("event: message_stop"), r.text.includes("keep-alive")]).toEqual([200, true, false]);
  expect(r.closedAfterMs).toBeGreaterThanOrEqual(0);
  expect(r.closedAfterMs).toBeLessThan(RELEASE_AFTER_DONE_MS + 50 + 400);
  expect({ opened, closed: closedAt.length }).toEqual({ opened: 2, closed: 2 });
});
