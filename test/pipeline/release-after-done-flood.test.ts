/**
 * Found in session 45's list ("Not done yet"; fixed in session 46). After a Chat stream's `[DONE]` the
 * gateway lets the upstream body run 200–250 ms (pipeline/release-after-done.ts: so that its end can
 * come and its connection be reused) without reading it, with no cap on what it sends meanwhile: an
 * upstream that keeps sending after `[DONE]` filled the runtime's and the sockets' buffers (megabytes)
 * until the cancel at the bound.
 *
 * Here a raw upstream sends a 40 KiB SSE comment every 5 ms after `[DONE]` and never ends its body.
 * Expected: the client's reply ends at `[DONE]` with nothing after it, and the upstream sees its socket
 * closed before the bound (200 ms), having sent little past the cap (64 KiB read, then cancelled).
 * Before the fix: closed 200–250 ms after `[DONE]` (206 and 243 ms seen), having sent some 30–40
 * pieces (1.4 and 1.6 MiB seen). After: 10–25 ms, 80 KiB (two pieces; seen on an idle machine).
 * The normal case (the body's end a few ms after `[DONE]`, its connection reused) is
 * test/pipeline/chat-done-cut-connection-reuse.test.ts; keep-alive comments after `[DONE]`, cut at the
 * bound, test/pipeline/release-after-done.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../support/gateway.ts";
import { CHAT_SSE as SSE, gatewayOnRawUpstream, httpChunk as chunk } from "../support/raw-upstream.ts";
import { AFTER_DONE_MAX_BYTES, readersAwaitingRelease, RELEASE_AFTER_DONE_MS } from "../../pipeline/release-after-done.ts";

/** One SSE comment of 40 KiB as one chunk of the body: the second read after `[DONE]` passes the cap. */
const PIECE_KIB = 40;
const PIECE = chunk(`: ${"x".repeat(PIECE_KIB * 1024 - 4)}\n\n`);
/** Per connection: when `[DONE]` was written (performance.now()), the bytes written after it, when it closed. */
interface Conn {
  doneAt: number;
  sent: number;
  closedAt?: number;
  timer?: ReturnType<typeof setInterval>;
}
const conns: Conn[] = [];
// A raw HTTP/1.1 upstream: the Chat stream, then a 40 KiB comment every 5 ms, never an end of body.
const server = Bun.listen<Conn | undefined>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    data(s, d) {
      if (!d.toString().includes("\r\n\r\n")) return;
      s.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n` + chunk(SSE));
      const c: Conn = { doneAt: performance.now(), sent: 0 };
      c.timer = setInterval(() => {
        if (c.closedAt === undefined) c.sent += Math.max(0, s.write(PIECE));
      }, 5);
      s.data = c;
      conns.push(c);
    },
    close(s) {
      if (!s.data) return;
      clearInterval(s.data.timer);
      s.data.closedAt = performance.now();
    },
  },
});

let gw: TestGateway;
beforeAll(async () => {
  gw = await gatewayOnRawUpstream(server.port);
});
afterAll(async () => {
  for (const c of conns) clearInterval(c.timer);
  await gw?.stop();
  server.stop(true);
});

for (const [client, path, body, ends] of [
  ["native Chat", "/v1/chat/completions", { model: "p/m", stream: true, messages: [{ role: "user", content: "hi" }] }, "data: [DONE]\n\n"],
  ["Messages ← Chat", "/v1/messages", { model: "p/m", stream: true, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, "event: message_stop"],
] as const) {
  test(`${client}: an upstream that keeps sending after [DONE] is cut before the bound, having sent little past ${AFTER_DONE_MAX_BYTES / 1024} KiB`, async () => {
    const before = conns.length;
    const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
    const text = await res.text();
    const c = conns[before]!;
    for (let i = 0; i < 100 && c.closedAt === undefined; i++) await Bun.sleep(20);
    const closedAfterMs = c.closedAt === undefined ? Infinity : Math.round(c.closedAt - c.doneAt);
    // figures for the commit message: bun test prints them
    console.log(`${client}: closed ${closedAfterMs} ms after [DONE], ${Math.round(c.sent / 1024)} KiB sent after it`);
    // Closed before the bound, having sent the cap and at most a dozen pieces more (what comes while the
    // gateway reads and cancels; 1 seen on an idle machine, where the bound let 30-40 through).
    const bound = AFTER_DONE_MAX_BYTES + 12 * PIECE_KIB * 1024;
    const closed = closedAfterMs < RELEASE_AFTER_DONE_MS ? "before the bound" : `${closedAfterMs} ms after [DONE]`;
    const sent = c.sent < bound ? "little" : `${Math.round(c.sent / 1024)} KiB`;
    expect({ status: res.status, ends: text.includes(ends), flood: text.includes("xxxx"), closed, sent }).toEqual({ status: 200, ends: true, flood: false, closed: "before the bound", sent: "little" });
    // the list the sweep cancels from empties at its bound, as before
    for (let i = 0; i < 50 && readersAwaitingRelease() > 0; i++) await Bun.sleep(20);
    expect(readersAwaitingRelease()).toBe(0);
  });
}
