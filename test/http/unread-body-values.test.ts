/**
 * The unread-body rule (pipeline/unread-body.ts closeIfBodyUnread) for answers that are not yet a
 * Response: the admin API's routes answer JSON objects, which Elysia makes a Response after its
 * `mapResponse` hook. The hook of src/http/server.ts makes such a value the Response Elysia would make
 * of it and hands it to the same function as every Response (src/http/keep-alive.ts unreadBodyAnswer),
 * so one function decides for both. Mounted here on an Elysia app as server.ts mounts it, with routes
 * that read no body (`parse: "none"`), asserted on what a client gets: status, JSON, headers, how long
 * the reply waited, whether the body was read.
 *
 * Before session 46 the hook decided values on its own, and left out one clause of the rule: a reply
 * that says `Connection: close` already is not drained (the connection closes anyway). A value whose
 * route had set `Connection: close` waited for the drain deadline for a body that did not come, and its
 * body was read (the last test failed: 100 ms, body read; now at once, body left).
 */
import { expect, test } from "bun:test";
import { Elysia } from "elysia";
import { unreadBodyAnswer } from "../../src/http/keep-alive.ts";

const DRAIN_MS = 100;

const app = new Elysia()
  .onRequest(({ set }) => {
    set.headers["access-control-allow-origin"] = "http://app.example"; // as the browser guard sets CORS headers
  })
  .mapResponse(({ request, responseValue, set }) => unreadBodyAnswer(request, responseValue, set, DRAIN_MS))
  .post(
    "/created",
    ({ set }) => {
      set.status = 201;
      return { name: "x" };
    },
    { parse: "none" },
  )
  .post(
    "/closing",
    ({ set }) => {
      set.headers.connection = "close";
      return { ok: true };
    },
    { parse: "none" },
  )
  .get("/socket", () => undefined);

/** A POST to `path` declaring `declared` bytes of which `sent` are sent (the rest never comes); `chunked`: no length. */
function request(path: string, opts: { declared?: number; sent: string; chunked?: boolean; method?: string }): Request {
  const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(opts.sent)) }); // never closed
  const headers: Record<string, string> = opts.chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(opts.declared ?? opts.sent.length) };
  if (opts.sent.length === opts.declared) return new Request(`http://127.0.0.1${path}`, { method: opts.method ?? "POST", headers, body: opts.sent });
  return new Request(`http://127.0.0.1${path}`, { method: opts.method ?? "POST", headers, body, duplex: "half" } as RequestInit);
}

/** What the client gets: status, connection header, CORS header, JSON, ms waited, whether the body was read. */
async function answer(req: Request) {
  const t0 = performance.now();
  const res = await app.handle(req);
  const ms = Math.round(performance.now() - t0);
  const text = await res.text();
  return { status: res.status, connection: res.headers.get("connection"), cors: res.headers.get("access-control-allow-origin"), body: text ? JSON.parse(text) : null, ms, bodyRead: req.bodyUsed };
}

test("a small body that arrived whole: drained, the value's status and JSON, the connection kept", async () => {
  const a = await answer(request("/created", { declared: 2, sent: "{}" }));
  expect({ ...a, ms: undefined }).toEqual({ status: 201, connection: null, cors: "http://app.example", body: { name: "x" }, ms: undefined, bodyRead: true });
});

test("a small body that does not arrive: Connection: close after the drain deadline, the value's status and JSON", async () => {
  const a = await answer(request("/created", { declared: 1000, sent: "{}" }));
  expect({ ...a, ms: undefined }).toEqual({ status: 201, connection: "close", cors: "http://app.example", body: { name: "x" }, ms: undefined, bodyRead: true });
  expect(a.ms).toBeGreaterThanOrEqual(DRAIN_MS - 5);
});

test("a chunked body: Connection: close at once, not read", async () => {
  const a = await answer(request("/created", { sent: "{}", chunked: true }));
  expect({ ...a, ms: undefined }).toEqual({ status: 201, connection: "close", cors: "http://app.example", body: { name: "x" }, ms: undefined, bodyRead: false });
  expect(a.ms).toBeLessThan(DRAIN_MS / 2);
});

test("the WebSocket route's undefined with a GET body: Connection: close (a GET's body cannot be drained)", async () => {
  const res = await app.handle(new Request("http://127.0.0.1/socket", { method: "GET", headers: { "content-length": "2" } }));
  expect(res.headers.get("connection")).toBe("close");
});

test("a value whose route says Connection: close already: answered at once, the body left unread", async () => {
  const a = await answer(request("/closing", { declared: 1000, sent: "{}" }));
  expect({ ...a, ms: undefined }).toEqual({ status: 200, connection: "close", cors: "http://app.example", body: { ok: true }, ms: undefined, bodyRead: false });
  expect(a.ms).toBeLessThan(DRAIN_MS / 2);
});
