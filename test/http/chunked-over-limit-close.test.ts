/**
 * A chunked request body on /v1 that grows past `server.max_body_bytes` gets the 413 once the guard's
 * read passes the limit, and that reply says `Connection: close` and the server closes the connection
 * (pipeline/guard.ts guardBytes): the rest of a body cut at the limit is left unread and must not hold
 * the socket while the client goes on sending chunks (`bodyUsed` is true, so bodyLeftUnread does not
 * apply). Found by review; before the fix the 413 had no close and the socket stayed open 3 s later
 * while chunks kept coming every 200 ms with `keep_alive_timeout_ms: 0`.
 */
import { expect, test } from "bun:test";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { trickle } from "../support/raw-http.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n  max_body_bytes: 1000\n${DEFAULT_YAML}`);

test("POST /v1/chat/completions, chunked, past max_body_bytes and still sending: 413 with Connection: close, and the connection closed", async () => {
  const piece = "x".repeat(600);
  const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`;
  const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  const reply = await trickle(suite.gw.url, `${head}${chunk}${chunk}`, { waitMs: 3_000, dripMs: 200, drip: chunk });
  expect(reply.text.slice(0, 12)).toBe("HTTP/1.1 413");
  expect({ saidClose: /^connection: close/im.test(reply.text), closedByServer: reply.closedByServer }).toEqual({ saidClose: true, closedByServer: true });
}, 10_000);
