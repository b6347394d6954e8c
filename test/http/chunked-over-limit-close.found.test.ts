/**
 * Found by review (report only): a chunked request body on /v1 that grows past `server.max_body_bytes`
 * gets the 413 once the guard's read passes the limit (pipeline/guard.ts `receivedTooLarge`), but that
 * reply has no `Connection: close` and the server keeps the connection while the client goes on sending
 * chunks: with `keep_alive_timeout_ms: 0`, for as long as it sends. The read began, so `bodyUsed` is
 * true and pipeline/context.ts `bodyLeftUnread` (0e2f84fa) says nothing was left unread, and the 408's
 * own close does not apply either. It is the hold 0e2f84fa closed for bodies never read, on a body cut
 * by the size limit. Expected: the 413 with `Connection: close`, and the server closes the connection.
 * Actual: 413 without it, connection still open 3 s later while chunks keep coming every 200 ms.
 */
import { expect, test } from "bun:test";
import { connect } from "node:net";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n  keep_alive_timeout_ms: 0\n  max_body_bytes: 1000\n${DEFAULT_YAML}`);

test("POST /v1/chat/completions, chunked, past max_body_bytes and still sending: 413 with Connection: close, and the connection closed", async () => {
  const url = new URL(suite.gw.url);
  const piece = "x".repeat(600);
  const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`;
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
    const drip = setInterval(() => socket.write(chunk), 200);
    const giveUp = setTimeout(() => finish(false), 3_000);
    socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.on("connect", () => socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}${chunk}`));
  });
  expect(reply.text.slice(0, 12)).toBe("HTTP/1.1 413");
  expect({ saidClose: /^connection: close/im.test(reply.text), closedByServer: reply.closedByServer }).toEqual({ saidClose: true, closedByServer: true });
}, 10_000);
