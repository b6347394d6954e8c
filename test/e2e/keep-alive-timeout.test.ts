/**
 * `server.keep_alive_timeout_ms` (src/http/keep-alive.ts, README "Not done yet" until this was fixed):
 * a connection with no request in flight is closed by the server after the timeout, while nothing a
 * request is waiting on is cut by it: a streamed reply silent for longer, an upstream that takes longer
 * to answer, a request body that pauses, a Responses WebSocket between turns. Raw sockets, as the
 * timeout is the server closing a connection a client keeps; the timeout is 1 s here (Bun checks every
 * 4 s, so a close comes 1–5 s after the last byte) and every silence in flight is 6 s.
 */
import { describe, expect, test } from "bun:test";
import { connect as tcpConnect, type Socket } from "node:net";
import { DEFAULT_YAML } from "../support/gateway.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { connect as socketConnect } from "../support/responses-socket.ts";

const suite = gatewaySuite(`server:\n  keep_alive_timeout_ms: 1000\n${DEFAULT_YAML}`);

/** A silence longer than the timeout and Bun's 4 s check interval together, ms. */
const SILENCE = 6_000;
/** How long a test waits for the server to close an idle connection, ms (timeout plus check interval, and slack). */
const CLOSE_WITHIN = 12_000;

/** One raw client connection: what it received, and when (ms after opening) the server closed it. */
interface Raw {
  socket: Socket;
  text(): string;
  /** Resolves with the received text once `done(text)` holds; rejects after `ms`. */
  until(done: (text: string) => boolean, ms: number): Promise<string>;
  /** Resolves true when the server closes the connection within `ms`, else false (the test then closes it). */
  closedWithin(ms: number): Promise<boolean>;
}

function open(): Promise<Raw> {
  const url = new URL(suite.gw.url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    const closeWaiters: Array<() => void> = [];
    const dataWaiters: Array<() => void> = [];
    socket.on("data", (d: Buffer) => {
      chunks.push(d);
      for (const w of dataWaiters.splice(0)) w();
    });
    socket.on("close", () => {
      closed = true;
      for (const w of closeWaiters.splice(0)) w();
      for (const w of dataWaiters.splice(0)) w();
    });
    socket.on("error", () => {});
    const text = () => Buffer.concat(chunks).toString("utf8");
    socket.on("connect", () =>
      resolve({
        socket,
        text,
        until(done, ms) {
          return new Promise((res, rej) => {
            const giveUp = setTimeout(() => rej(new Error(`not received within ${ms} ms; got: ${text().slice(-300)}`)), ms);
            const check = () => {
              if (done(text())) {
                clearTimeout(giveUp);
                res(text());
              } else if (closed) {
                clearTimeout(giveUp);
                rej(new Error(`closed before it arrived; got: ${text().slice(-300)}`));
              } else dataWaiters.push(check);
            };
            check();
          });
        },
        closedWithin(ms) {
          return new Promise((res) => {
            if (closed) return res(true);
            const giveUp = setTimeout(() => {
              socket.destroy();
              res(false);
            }, ms);
            closeWaiters.push(() => {
              clearTimeout(giveUp);
              res(true);
            });
          });
        },
      }),
    );
    socket.on("error", reject);
  });
}

const chatBody = (stream = false) => JSON.stringify({ model: "oai/gpt-x", stream, messages: [{ role: "user", content: "hi" }] });
const post = (path: string, body: string, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** The number of complete JSON (Content-Length) replies in `text`. */
function wholeReplies(text: string): number {
  let n = 0;
  let at = 0;
  for (;;) {
    const head = text.indexOf("\r\n\r\n", at);
    if (head < 0) return n;
    const len = /content-length: (\d+)/i.exec(text.slice(at, head));
    if (!len || text.length < head + 4 + Number(len[1])) return n;
    n++;
    at = head + 4 + Number(len[1]);
  }
}

/** The text of a Chat stream's content deltas in a raw HTTP reply (its body may be chunked). */
function streamedText(raw: string): string {
  const at = raw.indexOf("\r\n\r\n");
  let body = raw.slice(at + 4);
  if (/transfer-encoding: chunked/i.test(raw.slice(0, at))) {
    let out = "";
    for (let i = 0; ; ) {
      const eol = body.indexOf("\r\n", i);
      const size = parseInt(body.slice(i, eol), 16);
      if (!(size > 0)) break;
      out += body.slice(eol + 2, eol + 2 + size);
      i = eol + 2 + size + 2;
    }
    body = out;
  }
  let text = "";
  for (const line of body.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  }
  return text;
}

describe("server.keep_alive_timeout_ms", () => {
  test("an idle keep-alive connection is closed by the server once its reply is done, and is reused before that", async () => {
    const c = await open();
    c.socket.write(post("/v1/chat/completions", chatBody()));
    await c.until((t) => wholeReplies(t) === 1, 10_000);
    // Keep-alive still works: a second request right after is served on the same connection.
    c.socket.write(post("/v1/chat/completions", chatBody()));
    const both = await c.until((t) => wholeReplies(t) === 2, 10_000);
    expect(both.match(/HTTP\/1\.1 200/g)?.length).toBe(2);
    // Then nothing: the server closes the connection (before, it kept it until the client closed it).
    expect(await c.closedWithin(CLOSE_WITHIN)).toBe(true);
    expect(suite.gw.fake.requests.length).toBe(2);
  }, 40_000);

  test("in flight nothing is cut: a silent stream, a slow upstream, a pausing body, a WebSocket between turns; the first three close only after their reply", async () => {
    suite.gw.fake.handle((rec) => {
      const prompt = JSON.stringify(rec.body);
      if (prompt.includes("slow-stream")) {
        const reply = simpleReply("openai-chat", { text: "first part, second part" }, true);
        // The stream's first two events (the second one's text commits the reply), then SILENCE ms of nothing, then the rest.
        const sse = reply.sse!;
        const cut = sse.indexOf("\n\n", sse.indexOf("\n\n") + 2) + 2;
        return { ...reply, split_at: [cut], delay_ms: SILENCE };
      }
      if (prompt.includes("slow-upstream")) return { ...simpleReply("openai-chat", { text: "late answer" }, false), headers_delay_ms: SILENCE };
      return undefined;
    });
    const streamed = (async () => {
      const c = await open();
      c.socket.write(post("/v1/chat/completions", JSON.stringify({ model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "slow-stream" }] })));
      const text = await c.until((t) => t.includes("data: [DONE]"), SILENCE + 10_000);
      return { text, closed: await c.closedWithin(CLOSE_WITHIN) };
    })();
    const waited = (async () => {
      const c = await open();
      c.socket.write(post("/v1/chat/completions", JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "slow-upstream" }] })));
      const text = await c.until((t) => wholeReplies(t) === 1, SILENCE + 10_000);
      return { text, closed: await c.closedWithin(CLOSE_WITHIN) };
    })();
    const paused = (async () => {
      const c = await open();
      const whole = post("/v1/chat/completions", chatBody());
      c.socket.write(whole.slice(0, whole.length - 10));
      await Bun.sleep(SILENCE);
      c.socket.write(whole.slice(whole.length - 10));
      const text = await c.until((t) => wholeReplies(t) === 1, 10_000);
      return { text, closed: await c.closedWithin(CLOSE_WITHIN) };
    })();
    const socket = (async () => {
      const ws = await socketConnect(suite.gw.url);
      await Bun.sleep(SILENCE);
      ws.send({ type: "response.create", model: "resp/gpt-x", store: false, input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }] });
      const frames = await ws.untilTerminal();
      ws.ws.close();
      return frames.at(-1);
    })();

    const [s, w, p, last] = await Promise.all([streamed, waited, paused, socket]);
    expect(s.text).toContain("HTTP/1.1 200");
    expect(streamedText(s.text)).toBe("first part, second part");
    expect(s.text).not.toContain('"error"');
    expect(w.text).toContain("HTTP/1.1 200");
    expect(w.text).toContain("late answer");
    expect(p.text).toContain("HTTP/1.1 200");
    expect(last.type).toBe("response.completed");
    // The keep-alive timer is back on once each reply is done.
    expect([s.closed, w.closed, p.closed]).toEqual([true, true, true]);
  }, 60_000);
});
