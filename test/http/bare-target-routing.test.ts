/**
 * A request with no `Host` (HTTP/1.0: HAProxy's health checks, old scripts) is routed by its whole path,
 * as the same request with a Host. Bun's `request.url` is then the bare request target
 * (`/abcdefghij/health`, no scheme or authority), and Elysia reads a URL's path from the first "/" after
 * its 11th character: until this fix such a request whose path no route serves was answered by the route
 * that serves the path's tail (`GET /abcdefghij/health` was the health answer, 200; `GET
 * /admin/api/keys/x` a 404 where with a Host it is a 405; `GET /xxxxxxxxxx/v1/models` the model list;
 * `POST /abcdefghij/v1/chat/completions` a chat completion, sent upstream).
 * src/http/request-head.ts `wholeTarget` makes the bare target a URL on the request Bun made, so the
 * socket's peer (the loopback exemption, SPEC G-3), the client key, the body and the connection rules
 * stay those of the request. Every answer is compared, over raw sockets, with the same request's
 * with `Host: 127.0.0.1:PORT` (same HTTP version): status, body and the headers a client reads.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { exchange, twoOnOneSocket } from "../support/raw-http.ts";

/** A non-loopback IPv4 address of this machine (the peer tests are skipped without one). */
const lan = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;

/** A client key of the keyed gateway (a test value, not a real secret). */
const CLIENT_KEY = "sk-sy-bare-target-client-0123456789";

let open: TestGateway;
let keyed: TestGateway;
beforeAll(async () => {
  [open, keyed] = await Promise.all([
    startGateway(`
server:
  host: 127.0.0.1
${fakeProviders([["oai", "openai"], ["gem", "gemini"]])}`),
    startGateway(`
server:
  host: 127.0.0.1
  require_api_key: true
keys:
  - { name: client, key: ${CLIENT_KEY} }
${fakeProviders([["oai", "openai"], ["gem", "gemini"]])}`),
  ]);
});
afterAll(async () => {
  await Promise.all([open?.stop(), keyed?.stop()]);
});

/** What a client reads of an answer: its status, the headers it acts on, its body. */
interface Answer {
  status: number;
  allow: string | null;
  contentType: string | null;
  wwwAuthenticate: string | null;
  body: string;
}

/** Sends `text` on a new connection to `gw` from source address `from`; the answer, read until the server closes. */
async function sendRaw(gw: TestGateway, text: string, from = "127.0.0.1"): Promise<Answer> {
  const a = await exchange(gw.url, text, { from });
  return { status: a.status, allow: a.header("allow"), contentType: a.header("content-type"), wwwAuthenticate: a.header("www-authenticate"), body: a.body };
}

/** An HTTP/1.0 request's text, with `Host: 127.0.0.1:PORT` of `gw` when `withHost`, else none; `extra` are further header lines. */
function request(gw: TestGateway, method: string, path: string, withHost: boolean, extra: string[] = [], body = ""): string {
  const lines = [`${method} ${path} HTTP/1.0`, ...(withHost ? [`Host: 127.0.0.1:${new URL(gw.url).port}`] : []), ...extra];
  if (body) lines.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** The answers to the same request without a Host and with one. */
async function bothWays(gw: TestGateway, method: string, path: string, opts: { extra?: string[]; body?: string; from?: string } = {}): Promise<{ bare: Answer; hosted: Answer }> {
  const bare = await sendRaw(gw, request(gw, method, path, false, opts.extra, opts.body), opts.from);
  const hosted = await sendRaw(gw, request(gw, method, path, true, opts.extra, opts.body), opts.from);
  return { bare, hosted };
}

/** Paths whose tail from their 12th character is a served path, and paths of the wildcard routes. */
const GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent";
const CASES: Array<[method: string, path: string, status: number]> = [
  ["GET", "/abcdefghij/health", 404],
  ["HEAD", "/abcdefghij/health", 404],
  ["GET", "/xxxxxxxxxx/v1/models", 404],
  ["GET", "/admin/api/keys/x", 405],
  ["OPTIONS", "/admin/api/keys/x", 405],
  ["GET", "/admin/api/keys", 200],
  ["GET", "/v1/models", 200],
  ["DELETE", "/v1/models", 405],
  ["GET", "/v1/models/oai/gpt-none", 404],
  ["GET", "/v1/models/oai/x/v1/models", 404],
  ["PUT", "/v1/models/oai/gpt-none", 405],
  ["GET", GEMINI, 404],
  ["DELETE", GEMINI, 405],
  ["GET", "/v1beta/models", 200],
  ["GET", "/v1beta/models/gem/gemini-none", 404],
  ["GET", "/dashboard/abcdefghij/overview", 404],
  ["POST", "/abcdefghij/v1/chat/completions", 404],
  ["GET", "/health", 200],
  ["OPTIONS", "/", 204],
];

describe("without a Host, each path gets the answer it gets with one", () => {
  for (const [method, path, status] of CASES) {
    test(`${method} ${path}: ${status}`, async () => {
      const { bare, hosted } = await bothWays(open, method, path);
      expect(hosted.status).toBe(status);
      expect(bare).toEqual(hosted);
    });
  }

  test("GET /abcdefghij/health is not the health answer, and names its whole path", async () => {
    const { bare } = await bothWays(open, "GET", "/abcdefghij/health");
    expect(JSON.parse(bare.body)).toEqual({ error: { message: "Unknown path: GET /abcdefghij/health", type: "invalid_request_error", param: null, code: "unknown_url" } });
  });

  test("GET /admin/api/keys/x: a 405 naming the methods the path takes", async () => {
    const { bare } = await bothWays(open, "GET", "/admin/api/keys/x");
    expect([bare.allow, JSON.parse(bare.body).error.message]).toEqual(["PATCH, DELETE", "The method GET is not allowed on /admin/api/keys/x; it takes PATCH or DELETE."]);
  });

  test("POST /abcdefghij/v1/chat/completions without a Host is a 404, not a chat completion sent upstream", async () => {
    const body = JSON.stringify({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    const before = open.fake.requests.length;
    const { bare, hosted } = await bothWays(open, "POST", "/abcdefghij/v1/chat/completions", { body });
    expect([bare.status, JSON.parse(bare.body).error.code]).toEqual([404, "unknown_url"]);
    expect(bare).toEqual(hosted);
    expect(open.fake.requests.length - before).toBe(0);
  });

  test("HAProxy-style checks: GET /health and OPTIONS / without a Host", async () => {
    expect(await sendRaw(open, "GET /health HTTP/1.0\r\n\r\n")).toMatchObject({ status: 200, body: JSON.stringify({ status: "ok", db: "ok" }) });
    // `OPTIONS /` (HAProxy's default `option httpchk`): 204 with Allow, Host or not (test/http/options-health-check.test.ts).
    const root = await sendRaw(open, "OPTIONS / HTTP/1.0\r\n\r\n");
    expect(root).toMatchObject({ status: 204, allow: "GET, HEAD, OPTIONS", body: "" });
  });
});

describe("the request's body and connection stay its own", () => {
  test("POST /admin/api/keys without a Host reads the body: an unknown field is the same 400, a good body makes the key", async () => {
    const { bare, hosted } = await bothWays(open, "POST", "/admin/api/keys", { body: JSON.stringify({ name: "bare-made", nope: 1 }) });
    expect(hosted.status).toBe(400);
    expect(bare).toEqual(hosted);
    const made = await sendRaw(open, request(open, "POST", "/admin/api/keys", false, [], JSON.stringify({ name: "bare-made", tag: "no host" })));
    expect(made.status).toBe(201);
    const listed = JSON.parse((await sendRaw(open, request(open, "GET", "/admin/api/keys", true))).body) as { keys?: Array<{ name: string; tag?: string }> } | Array<{ name: string; tag?: string }>;
    const keys = Array.isArray(listed) ? listed : (listed.keys ?? []);
    expect(keys.filter((k) => k.name === "bare-made").map((k) => k.tag)).toEqual(["no host"]);
  });

  test("the connection: HTTP/1.0 is closed after the answer, with a Host or without; an empty Host's 421 keeps it as a named Host's", async () => {
    const next = `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const ka = ["Connection: keep-alive"];
    const one = await twoOnOneSocket(open.url, request(open, "POST", "/abcdefghij/health", false, ka, "{}"), next);
    const oneHosted = await twoOnOneSocket(open.url, request(open, "POST", "/abcdefghij/health", true, ka, "{}"), next);
    expect({ ...oneHosted, firstMs: 0 }).toEqual({ statuses: ["404"], saidClose: false, closed: true, firstMs: 0 });
    expect({ ...one, firstMs: 0 }).toEqual({ ...oneHosted, firstMs: 0 });
    // An empty `Host:` (HTTP/1.1) is a bare request target too; refused (421) before its small body is read.
    const post = (host: string) => `POST /abcdefghij/health HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
    const empty = await twoOnOneSocket(open.url, post(""), next);
    const named = await twoOnOneSocket(open.url, post("rebind.example"), next);
    expect({ ...named, firstMs: 0 }).toEqual({ statuses: ["421", "200"], saidClose: false, closed: false, firstMs: 0 });
    expect({ ...empty, firstMs: 0 }).toEqual({ ...named, firstMs: 0 });
  });
});

describe("the socket's peer and the client key still decide", () => {
  test.skipIf(lan === undefined)("a non-loopback peer needs a key without a Host too (401); from 127.0.0.1 the same paths are served", async () => {
    for (const path of ["/v1/models/oai/gpt-none", "/v1beta/models", "/admin/api/keys"]) {
      const remote = await bothWays(open, "GET", path, { from: lan });
      expect([path, remote.bare.status]).toEqual([path, 401]);
      expect(remote.bare).toEqual(remote.hosted);
      const local = await bothWays(open, "GET", path);
      expect([path, local.bare.status]).toEqual([path, path === "/v1/models/oai/gpt-none" ? 404 : 200]);
    }
  });

  test("with require_api_key, without a Host: no key is a 401, a key (header or Gemini's ?key=) is served", async () => {
    for (const [path, extra] of [
      ["/v1/models/oai/gpt-none", []],
      ["/v1/models/oai/gpt-none", [`Authorization: Bearer ${CLIENT_KEY}`]],
      ["/v1beta/models/gem/gemini-none", []],
      [`/v1beta/models/gem/gemini-none?key=${CLIENT_KEY}`, []],
      ["/xxxxxxxxxx/v1/models", [`Authorization: Bearer ${CLIENT_KEY}`]],
    ] as Array<[string, string[]]>) {
      const { bare, hosted } = await bothWays(keyed, "GET", path, { extra });
      expect([path, extra.length, bare.status]).toEqual([path, extra.length, extra.length || path.includes("?key=") ? 404 : 401]);
      expect(bare).toEqual(hosted);
    }
  });
});
