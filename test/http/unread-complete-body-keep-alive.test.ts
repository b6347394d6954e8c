/**
 * A reply to a request whose small declared body the route did not read keeps the connection when the
 * whole body arrived: pipeline/unread-body.ts `closeIfBodyUnread` drains a body of a `Content-Length` up
 * to 64 KiB for up to `server.body_timeout_ms` (at most 500 ms) before the reply. A keep-alive client
 * that sends a small complete body to a route that reads none (`POST /admin/api/config/reload` with
 * `{}`, as `requests.post(url, json={})` does; an unknown path) reuses its connection (found by review:
 * since 0e2f84fa every such reply said `Connection: close`, one TCP connection per call). A body that
 * does not arrive within the drain's deadline still gets `Connection: close` and the socket is closed
 * (the trickle 0e2f84fa closed; the large-body trickles: test/admin/slow-body.test.ts). A GET's or
 * HEAD's body is not drained: Bun hands them no body (pipeline/unread-body.ts), so whether it arrived
 * cannot be known; they keep the close. The gateway's own refusals before the body read (a remote
 * caller's 401 without a key, an unknown Gemini method's 404) follow the same rule since session 45
 * (they closed the connection after any body before); a 413 for a declared length over
 * `server.max_body_bytes` still closes it.
 */
import { describe, expect, test } from "bun:test";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { rawPost, trickle, twoOnOneSocket as twoOnOne } from "../support/raw-http.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n  max_body_bytes: 1000\n${DEFAULT_YAML}`);

/** {@link twoOnOne} on the suite's gateway. */
const twoOnOneSocket = (first: string, second: string, rest = "", restAfterMs = 0) => twoOnOne(suite.gw.url, first, second, rest, restAfterMs);

const H = "Host: 127.0.0.1\r\n";
const NEXT = `GET /v1/models HTTP/1.1\r\n${H}\r\n`;
const post = rawPost;

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
    const reply = await trickle(suite.gw.url, post("/admin/api/config/reload", 1000, "{"), { waitMs: 2_000, dripMs: 100 });
    expect({ status: reply.text.slice(9, 12), saidClose: /^connection: close/im.test(reply.text), closedByServer: reply.closedByServer }).toEqual({ status: "200", saidClose: true, closedByServer: true });
  }, 10_000);

  test("GET /v1/models with a JSON body {}: 200 with Connection: close (Bun gives a GET no body to drain)", async () => {
    const r = await twoOnOneSocket(`GET /v1/models HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["200"], saidClose: true, closed: true });
  });

  test("HEAD /health with a JSON body {}: 200 with Connection: close (nor a HEAD)", async () => {
    const r = await twoOnOneSocket(`HEAD /health HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`, NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["200"], saidClose: true, closed: true });
  });
});

// X-Forwarded-For: the request counts as from another machine (SPEC G-3), which needs a key.
const REMOTE = "X-Forwarded-For: 203.0.113.5\r\n";

describe("the gateway's own refusals before the body read follow the same rule", () => {
  test("POST /v1/chat/completions from another machine without a key, {} sent whole: 401, then the same socket answers GET /v1/models", async () => {
    const r = await twoOnOneSocket(rawPost("/v1/chat/completions", 2, "{}", REMOTE), NEXT);
    expect({ ...r, firstMs: undefined }).toEqual({ statuses: ["401", "200"], saidClose: false, closed: false, firstMs: undefined });
  });

  test("POST /v1beta/models/oai/gpt-test:fooBar (a method the gateway does not serve), {} sent whole: 404, then the same socket answers", async () => {
    const r = await twoOnOneSocket(post("/v1beta/models/oai/gpt-test:fooBar", 2, "{}"), NEXT);
    expect({ ...r, firstMs: undefined }).toEqual({ statuses: ["404", "200"], saidClose: false, closed: false, firstMs: undefined });
  });

  test("the 401 with Content-Length: 1000 and 2 bytes sent: Connection: close after the drain deadline, the connection closed", async () => {
    const r = await twoOnOneSocket(rawPost("/v1/chat/completions", 1000, "{}", REMOTE), NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["401"], saidClose: true, closed: true });
    expect(r.firstMs).toBeGreaterThanOrEqual(250);
    expect(r.firstMs).toBeLessThan(900);
  });

  test("a declared length over server.max_body_bytes (2000 > 1000), sent whole: 413 with Connection: close, the connection closed", async () => {
    const r = await twoOnOneSocket(post("/v1/chat/completions", 2000, " ".repeat(2000)), NEXT);
    expect({ statuses: r.statuses, saidClose: r.saidClose, closed: r.closed }).toEqual({ statuses: ["413"], saidClose: true, closed: true });
  });
});
