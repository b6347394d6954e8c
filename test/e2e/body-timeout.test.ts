/**
 * A request whose body never fully arrives (SPEC G-4, README "Not done yet" until this was fixed): the
 * server's idle timer is off while a request is in flight (a reply may be silent for minutes,
 * src/http/keep-alive.ts), so the guard's body read is bounded by `server.body_timeout_ms`: the client gets a 408 in its own format, the connection is
 * closed, and nothing goes upstream. Raw sockets, since no HTTP client sends a body that stalls.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite(`server:\n  body_timeout_ms: 300\n${DEFAULT_YAML}`);

/** What came back on one raw connection: the status, lower-cased headers, body text, and whether the server closed it. */
interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  closedByServer: boolean;
}

/**
 * Writes `pieces` on a fresh connection (`gapMs` apart), then keeps the connection open and waits for
 * the server: returns what it answered once it closed the connection, or, when it has not closed it
 * within `waitMs`, what arrived so far with `closedByServer` false.
 */
function rawExchange(pieces: string[], opts: { gapMs?: number; waitMs?: number } = {}): Promise<RawReply> {
  const url = new URL(suite.gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const head = split < 0 ? text : text.slice(0, split);
      const [statusLine, ...lines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(" ")[1] ?? 0), headers, body: split < 0 ? "" : text.slice(split + 4), closedByServer });
    };
    const giveUp = setTimeout(() => finish(false), opts.waitMs ?? 5_000);
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", (e) => (done ? undefined : reject(e)));
    socket.on("connect", async () => {
      for (const [i, p] of pieces.entries()) {
        if (i > 0 && opts.gapMs) await Bun.sleep(opts.gapMs);
        socket.write(p);
      }
    });
  });
}

const chatBody = JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] });
const head = (path: string, extra: string) => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe("a request body that never fully arrives", () => {
  test("Chat, Content-Length larger than what is sent: 408 in OpenAI's error shape, Connection: close, the server closes; nothing upstream", async () => {
    const reply = await rawExchange([head("/v1/chat/completions", `Content-Length: ${chatBody.length + 50}\r\n`) + chatBody]);
    expect(reply.status).toBe(408);
    expect(reply.headers.connection).toBe("close");
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(reply.body)).toEqual({
      error: {
        message: "The request body did not fully arrive within 300 ms (server.body_timeout_ms); the connection is closed.",
        type: "invalid_request_error",
        param: null,
        code: "request_timeout",
      },
    });
    expect(reply.closedByServer).toBe(true);
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Messages, a chunked body that stalls after its first chunk: 408 in Anthropic's error shape, and the server closes", async () => {
    const part = '{"model":"anth/claude-x","max_tokens":5,';
    const reply = await rawExchange([head("/v1/messages", "anthropic-version: 2023-06-01\r\nTransfer-Encoding: chunked\r\n") + `${part.length.toString(16)}\r\n${part}\r\n`]);
    expect(reply.status).toBe(408);
    expect(reply.headers.connection).toBe("close");
    expect(JSON.parse(reply.body)).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "The request body did not fully arrive within 300 ms (server.body_timeout_ms); the connection is closed." },
    });
    expect(reply.closedByServer).toBe(true);
    expect(suite.gw.fake.requests.length).toBe(0);
  });

  test("Gemini, only the headers: 408 as google.rpc.Status, and the server closes", async () => {
    const reply = await rawExchange([head("/v1beta/models/gem/gemini-x:generateContent", "Content-Length: 80\r\n")]);
    expect(reply.status).toBe(408);
    expect(JSON.parse(reply.body)).toMatchObject({ error: { code: 408, status: "INVALID_ARGUMENT" } });
    expect(reply.closedByServer).toBe(true);
  });

  test("a body that arrives in pieces within the limit is served as usual (the connection stays open for the next request)", async () => {
    const reply = await rawExchange([head("/v1/chat/completions", `Content-Length: ${chatBody.length}\r\n`) + chatBody.slice(0, 20), chatBody.slice(20)], { gapMs: 50, waitMs: 1500 });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).choices[0].message.role).toBe("assistant");
    expect(reply.closedByServer).toBe(false);
    expect(suite.gw.fake.requests.length).toBe(1);
  });
});
