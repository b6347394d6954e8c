/**
 * A chunked request body on /v1 that grows past `server.max_body_bytes` gets the 413 once the guard's
 * read passes the limit, and that reply says `Connection: close` and the server closes the connection
 * (pipeline/guard.ts guardBytes): the rest of a body cut at the limit is left unread and must not hold
 * the socket while the client goes on sending chunks (`bodyUsed` is true, so bodyLeftUnread does not
 * apply). Found by review; before the fix the 413 had no close and the socket stayed open 3 s later
 * while chunks kept coming every 200 ms with `keep_alive_timeout_ms: 0`.
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
