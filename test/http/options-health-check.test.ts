/**
 * `OPTIONS /` and `OPTIONS /health` without an Origin, as a load balancer's health check sends them:
 * HAProxy's default `option httpchk` is `OPTIONS / HTTP/1.0` (no Host) and takes a 4xx as the server
 * down. Until session 47 `OPTIONS /` got the base address's 404 (a JSON body naming the dashboard and
 * the API paths), so an HAProxy with the default check marked a running gateway down, and `OPTIONS
 * /health` a 405. Now both are a 204 with `Allow` naming the path's methods (src/http/server.ts
 * `optionsAnswer`), without a key even where keys are required (a health check carries none). A CORS
 * preflight (an Origin and `Access-Control-Request-Method`) keeps the browser rules' answer: a listed
 * origin's 204 with the CORS headers, a foreign origin's 403. Other paths keep their 405 / 404.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { exchange } from "../support/raw-http.ts";

const APP = "http://localhost:5173";
/** A client key of the keyed gateway (a test value, not a real secret). */
const CLIENT_KEY = "sk-sy-options-check-client-0123456789";

let gw: TestGateway;
let keyed: TestGateway;
beforeAll(async () => {
  [gw, keyed] = await Promise.all([
    startGateway(`
server:
  host: 127.0.0.1
  cors_origins: ["${APP}"]
${fakeProviders([["oai", "openai"]])}`),
    startGateway(`
server:
  host: 127.0.0.1
  require_api_key: true
keys:
  - { name: client, key: ${CLIENT_KEY} }
${fakeProviders([["oai", "openai"]])}`),
  ]);
});
afterAll(async () => {
  await Promise.all([gw?.stop(), keyed?.stop()]);
});

/** Status, Allow and body of the answer to `text`, sent on a new connection to `g` and read until the server closes it. */
async function sendRaw(g: TestGateway, text: string): Promise<{ status: number; allow: string | null; body: string }> {
  const a = await exchange(g.url, text);
  return { status: a.status, allow: a.header("allow"), body: a.body };
}

describe("OPTIONS without an Origin on / and /health: 204 with Allow", () => {
  for (const path of ["/", "/health"]) {
    test(`fetch OPTIONS ${path}: 204, Allow GET, HEAD, OPTIONS, no body`, async () => {
      const res = await fetch(`${gw.url}${path}`, { method: "OPTIONS" });
      expect([res.status, res.headers.get("allow"), await res.text()]).toEqual([204, "GET, HEAD, OPTIONS", ""]);
    });
  }

  test("HAProxy's default check over a raw socket: OPTIONS / HTTP/1.0 without a Host, and with one", async () => {
    const bare = await sendRaw(gw, "OPTIONS / HTTP/1.0\r\n\r\n");
    expect(bare).toEqual({ status: 204, allow: "GET, HEAD, OPTIONS", body: "" });
    const hosted = await sendRaw(gw, `OPTIONS / HTTP/1.0\r\nHost: 127.0.0.1:${new URL(gw.url).port}\r\n\r\n`);
    expect(hosted).toEqual(bare);
    expect(await sendRaw(gw, "OPTIONS /health HTTP/1.0\r\n\r\n")).toEqual({ status: 204, allow: "GET, HEAD, OPTIONS", body: "" });
  });

  test("where keys are required: still 204 without a key (GET /health is open too)", async () => {
    const root = await fetch(`${keyed.url}/`, { method: "OPTIONS" });
    expect([root.status, root.headers.get("allow")]).toEqual([204, "GET, HEAD, OPTIONS"]);
    expect((await sendRaw(keyed, "OPTIONS / HTTP/1.0\r\n\r\n")).status).toBe(204);
  });

  test("the 405 of another method on /health names OPTIONS too", async () => {
    const res = await fetch(`${gw.url}/health`, { method: "PATCH", body: "{}" });
    expect([res.status, res.headers.get("allow")]).toEqual([405, "GET, HEAD, OPTIONS"]);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("The method PATCH is not allowed on /health; it takes GET, HEAD or OPTIONS.");
  });
});

describe("what does not change", () => {
  test("a CORS preflight keeps the browser rules' answer: a listed origin's 204 with CORS headers (no Allow), a foreign origin's 403", async () => {
    const listed = await fetch(`${gw.url}/health`, { method: "OPTIONS", headers: { origin: APP, "access-control-request-method": "GET" } });
    expect([listed.status, listed.headers.get("access-control-allow-origin"), listed.headers.get("allow")]).toEqual([204, APP, null]);
    const foreign = await fetch(`${gw.url}/`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "GET" } });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
  });

  test("OPTIONS on the API paths: their 405 with Allow; an unknown path: 404", async () => {
    const chat = await fetch(`${gw.url}/v1/chat/completions`, { method: "OPTIONS" });
    expect([chat.status, chat.headers.get("allow")]).toEqual([405, "POST"]);
    const unknown = await fetch(`${gw.url}/nothing-here`, { method: "OPTIONS" });
    expect(unknown.status).toBe(404);
  });

  test("GET / and GET /health answer as before", async () => {
    expect((await fetch(`${gw.url}/`)).status).toBe(404);
    expect((await fetch(`${gw.url}/`, { headers: { accept: "text/html" }, redirect: "manual" })).headers.get("location")).toBe("/dashboard");
    expect(await (await fetch(`${gw.url}/health`)).json()).toEqual({ status: "ok", db: "ok" });
  });
});
