/**
 * A reply to a request whose small declared body the route did not read keeps the connection when the
 * whole body arrived: src/http/keep-alive.ts `closeIfBodyUnread` drains a body of a `Content-Length` up
 * to 64 KiB for up to `server.body_timeout_ms` (at most 500 ms) before the reply. A keep-alive client
 * that sends a small complete body to a route that reads none (`POST /admin/api/config/reload` with
 * `{}`, as `requests.post(url, json={})` does; an unknown path) reuses its connection (found by review:
 * since 0e2f84fa every such reply said `Connection: close`, one TCP connection per call). A body that
 * does not arrive within the drain's deadline still gets `Connection: close` and the socket is closed
 * (the trickle 0e2f84fa closed; the large-body trickles: test/admin/slow-body.test.ts). A GET's body is
 * not drained: Bun hands a GET no body stream, so whether it arrived cannot be known; it keeps the close.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n${DEFAULT_YAML}`);

/**
 * Writes `first` (then, `restAfterMs` later, `rest`), then `second` (after the first reply) on one socket;
 * returns the replies' statuses, whether `Connection: close` was said, whether the server closed, and
 * how long the first reply took (ms).
 */
async function twoOnOneSocket(first: string, second: string, rest = "", restAfterMs = 0): Promise<{ statuses: string[]; saidClose: boolean; closed: boolean; firstMs: number }> {
  const url = new URL(suite.gw.url);
  const socket = connect(Number(url.port), url.hostname);
  let text = "";
  let closed = false;
  socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
  socket.on("close", () => (closed = true));
  socket.on("error", () => (closed = true));
  await new Promise((resolve) => socket.on("connect", resolve));
  const replies = () => (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length;
  const started = Date.now();
  socket.write(first);
  if (rest) setTimeout(() => socket.write(rest), restAfterMs);
  for (let i = 0; i < 100 && replies() < 1; i++) await Bun.sleep(10);
  const firstMs = Date.now() - started;
  await Bun.sleep(50);
  if (!closed) socket.write(second);
  for (let i = 0; i < 50 && replies() < 2 && !closed; i++) await Bun.sleep(20);
  socket.destroy();
  return { statuses: (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).map((l) => l.slice(9, 12)), saidClose: /^connection: close/im.test(text), closed, firstMs };
}

const H = "Host: 127.0.0.1\r\n";
const NEXT = `GET /v1/models HTTP/1.1\r\n${H}\r\n`;
const post = (path: string, length: number, body: string) => `POST ${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${body}`;

describe("a small body that arrived whole, on a route that reads none, keeps the connection", () => {
  test("POST /admin/api/config/reload with {} (Content-Length: 2): 200, then the same socket answers GET /v1/models", async () => {
    const r = await twoOnOneSocket(post("/admin/api/config/reload", 2, "{}"), NEXT);
    expect({ ...r, firstMs: undefined }).toEqual({ statuses: ["200", "200"], saidClose: false, closed: false, firstMs: undefined });
  });

  test("POST to an unknown path with {}: 404, then the same socket answers GET /v1/models", async () => {
    const r = await twoOnOneSocket(post("/no/such/path", 2, "{}"), NEXT);
    expect({ ...r, firstMs: undefined }).toEqual({ statuses: ["404", "200"], saidClose: false, closed: false, firstMs: undefined });
  });

  test("POST /admin/api/config/reload with a body in two pieces 50 ms apart: drained, 200, the connection kept", async () => {
    const r = await twoOnOneSocket(post("/admin/api/config/reload", 10, "{}"), NEXT, "        ", 50);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["200", "200"], saidClose: false, closed: false });
    expect(r.firstMs).toBeGreaterThanOrEqual(40);
  });
});

describe("a small body that does not arrive, or cannot be drained, still gets Connection: close", () => {
  test("POST /admin/api/config/reload, Content-Length: 1000 and 2 bytes sent: 200 with Connection: close after the drain deadline, the connection closed", async () => {
    const r = await twoOnOneSocket(post("/admin/api/config/reload", 1000, "{}"), NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["200"], saidClose: true, closed: true });
    // The drain waited for server.body_timeout_ms (300 ms), not for ever.
    expect(r.firstMs).toBeGreaterThanOrEqual(250);
    expect(r.firstMs).toBeLessThan(900);
  });

  test("POST /admin/api/config/reload, Content-Length: 1000, a byte every 100 ms: 200 with Connection: close, and the server closes while the client still sends", async () => {
    const url = new URL(suite.gw.url);
    const reply = await new Promise<{ text: string; closedByServer: boolean }>((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      let text = "";
      let done = false;
      const finish = (closedByServer: boolean) => {
        if (done) return;
        done = true;
        clearInterval(drip);
        clearTimeout(giveUp);
        socket.destroy();
        resolve({ text, closedByServer });
      };
      const drip = setInterval(() => socket.write(" "), 100);
      const giveUp = setTimeout(() => finish(false), 2_000);
      socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
      socket.on("close", () => finish(true));
      socket.on("error", () => finish(true));
      socket.on("connect", () => socket.write(post("/admin/api/config/reload", 1000, "{")));
    });
    expect({ status: reply.text.slice(9, 12), saidClose: /^connection: close/im.test(reply.text), closedByServer: reply.closedByServer }).toEqual({ status: "200", saidClose: true, closedByServer: true });
  }, 10_000);

  test("GET /v1/models with a JSON body {}: 200 with Connection: close (Bun gives a GET no body to drain)", async () => {
    const r = await twoOnOneSocket(`GET /v1/models HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["200"], saidClose: true, closed: true });
  });
});
