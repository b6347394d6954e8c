/**
 * Found by a security tryout: a request body that never fully arrives on the admin API or the
 * dashboard's sign-in is not bounded by `server.body_timeout_ms`, as the client API's is
 * (test/e2e/body-timeout.test.ts). The guard's timed body read (pipeline/guard.ts) runs for /v1 only;
 * `readBody` (src/admin/replies.ts) and `POST /dashboard/login` (src/dashboard/routes.ts) wait for the
 * body as long as the socket lives: with the default `keep_alive_timeout_ms` Bun's idle timer cuts the
 * connection after ~120 s with no reply at all, and with `keep_alive_timeout_ms: 0` never, so one
 * client (on a LAN-bound gateway, anyone: the sign-in needs no key) holds sockets open for as long as
 * it trickles bytes. Expected: the 408 `request_timeout` (OpenAI's error shape, as on /v1/chat/…) with
 * `Connection: close`, within body_timeout_ms. Raw sockets, since no HTTP client sends a stalling body.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n${DEFAULT_YAML}`);

/** Sends `head` and a first byte of a body declared longer, then one more byte every 200 ms; resolves with what the server wrote once it closed, or after `waitMs`. */
function trickle(path: string, waitMs: number): Promise<{ status: number; text: string; closedByServer: boolean }> {
  const url = new URL(suite.gw.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = "";
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ status: Number(text.split(" ")[1] ?? 0), text, closedByServer });
    };
    const drip = setInterval(() => socket.write(" "), 200);
    const giveUp = setTimeout(() => finish(false), waitMs);
    socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`));
  });
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
