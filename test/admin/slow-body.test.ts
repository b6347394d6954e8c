/**
 * Found by a security tryout (fixed: src/admin/replies.ts `readJson` reads every admin and sign-in body
 * through the guard's timed read): a request body that never fully arrives on the admin API or the
 * dashboard's sign-in is not bounded by `server.body_timeout_ms`, as the client API's is
 * (test/e2e/body-timeout.test.ts). The guard's timed body read (pipeline/guard.ts) runs for /v1 only;
 * `readBody` (src/admin/replies.ts) and `POST /dashboard/login` (src/dashboard/routes.ts) wait for the
 * body as long as the socket lives: with the default `keep_alive_timeout_ms` Bun's idle timer cuts the
 * connection after ~120 s with no reply at all, and with `keep_alive_timeout_ms: 0` never, so one
 * client (on a LAN-bound gateway, anyone: the sign-in needs no key) holds sockets open for as long as
 * it trickles bytes. Expected: the 408 `request_timeout` (OpenAI's error shape, as on /v1/chat/…) with
 * `Connection: close`, within body_timeout_ms. Raw sockets, since no HTTP client sends a stalling body.
 * A body that arrives in pieces within the timeout is still read and answered as before.
 */
import { describe, expect, test } from "bun:test";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { inPieces, RawConnection, rawPost, trickle as trickleRaw } from "../support/raw-http.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n${DEFAULT_YAML}`);

/** Sends the head of `POST path` (with the header lines `extraHead`) and `{` of a body declared 100000 bytes, then one more byte every `dripMs`; resolves with what the server wrote once it closed, or after `waitMs`. */
function trickle(path: string, waitMs: number, dripMs = 200, extraHead = "") {
  return trickleRaw(suite.gw.url, rawPost(path, 100000, "{", extraHead), { waitMs, dripMs });
}

describe("a body that trickles in on the admin API and the sign-in is cut by server.body_timeout_ms", () => {
  for (const path of ["/admin/api/keys", "/admin/api/dry-run", "/dashboard/login"]) {
    test(`POST ${path}: 408 request_timeout and the connection closed within the body timeout`, async () => {
      const reply = await trickle(path, 3_000);
      expect({ status: reply.status, closedByServer: reply.closedByServer }).toEqual({ status: 408, closedByServer: true });
      expect(reply.text).toContain('"code":"request_timeout"');
      expect(reply.text.toLowerCase()).toContain("connection: close");
    }, 10_000);
  }
});

describe("a route that answers without reading the body does not keep the connection while the body trickles in", () => {
  // One space every 2 s after `{` of a declared 100000 bytes: the reply comes at once (the route reads no
  // body), and its `Connection: close` ends the connection, whatever keep_alive_timeout_ms says.
  for (const [path, status] of [
    ["/admin/api/config/reload", 200],
    ["/dashboard/logout", 200],
    ["/admin/api/keys/nokey/disable", 404],
    ["/no/such/path", 404],
  ] as const) {
    test(`POST ${path}: ${status} with Connection: close, and the server closes the connection`, async () => {
      const reply = await trickle(path, 3_000, 2_000);
      expect({ status: reply.status, closedByServer: reply.closedByServer }).toEqual({ status, closedByServer: true });
      expect(reply.text.toLowerCase()).toContain("connection: close");
    }, 10_000);
  }

  test("POST /v1/chat/completions from another machine without a key: the 401 before the body, then the connection closed", async () => {
    // X-Forwarded-For: the request counts as remote (SPEC G-3), which needs a key; the guard refuses it before reading the body.
    const reply = await trickle("/v1/chat/completions", 3_000, 2_000, "X-Forwarded-For: 203.0.113.5\r\n");
    expect({ status: reply.status, closedByServer: reply.closedByServer }).toEqual({ status: 401, closedByServer: true });
    expect(reply.text.toLowerCase()).toContain("connection: close");
  }, 10_000);

  test("a body that was read, or no body, keeps the connection: the same socket answers a second request", async () => {
    const conn = await RawConnection.open(suite.gw.url);
    const body = JSON.stringify({ name: "kept-alive" });
    /** Writes `request` and waits (up to 1 s) for the `n`th reply's status line. */
    const ask = async (request: string, n: number) => {
      conn.write(request);
      await conn.untilReplies(n);
    };
    await ask(rawPost("/admin/api/keys", body.length, body), 1);
    await ask("GET /no/such/path HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 2);
    await ask("POST /admin/api/config/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 3);
    await Bun.sleep(100);
    expect(conn.closed).toBe(false);
    conn.destroy();
    expect(conn.statuses()).toEqual(["201", "404", "200"]);
    expect(conn.text.toLowerCase()).not.toContain("connection: close");
  });
});

/** Sends `POST path` with a body of `body`'s length, the body in two halves `gapMs` apart; resolves with the raw reply (status line, headers, body) once the server wrote it. */
function twoPieces(path: string, body: string, gapMs: number): Promise<{ status: number; text: string }> {
  const half = Math.floor(body.length / 2);
  return inPieces(suite.gw.url, [rawPost(path, Buffer.byteLength(body), body.slice(0, half)), body.slice(half)], gapMs);
}

describe("a body that arrives within server.body_timeout_ms is read as before", () => {
  test("POST /admin/api/keys in two pieces 100 ms apart: the key is created (201)", async () => {
    const reply = await twoPieces("/admin/api/keys", JSON.stringify({ name: "slow-but-in-time" }), 100);
    expect(reply.status).toBe(201);
    expect(reply.text).toContain('"name":"slow-but-in-time"');
    const listed = (await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys?: { name: string }[] } | { name: string }[];
    const names = (Array.isArray(listed) ? listed : (listed.keys ?? [])).map((k) => k.name);
    expect(names).toContain("slow-but-in-time");
  });

  test("POST /dashboard/login in two pieces: the key in the body is checked (401 for one that is not a key; 400 for an empty body)", async () => {
    const wrong = await twoPieces("/dashboard/login", JSON.stringify({ key: "not-a-key-of-this-gateway" }), 100);
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain("That key is not valid.");
    const empty = await fetch(`${suite.gw.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json" }, body: "" });
    expect({ status: empty.status, body: await empty.json() }).toEqual({ status: 400, body: { error: { message: 'Send {"key": "…"} as JSON.', type: "invalid_request_error", param: null, code: null } } });
  });

  test("POST /admin/api/dry-run with a normal body: answered from the body (not a 408)", async () => {
    const res = await fetch(`${suite.gw.url}/admin/api/dry-run`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] } }) });
    const text = await res.text();
    expect({ status: res.status, text }).toMatchObject({ status: 200 });
    expect(text).toContain("oai/gpt-x");
    expect(res.headers.get("connection")?.toLowerCase()).not.toBe("close");
  });
});
