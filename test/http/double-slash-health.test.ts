/**
 * Regression test: `GET //health` (a load balancer or monitor whose base address ends in "/", with or
 * without a Host) was a 405 whose message contradicted itself: "The method GET is not allowed on
 * /health; it takes GET, HEAD or OPTIONS." with `Allow: GET, HEAD, OPTIONS`; HEAD //health was a 405
 * too, and so was GET //metrics ("it takes GET or HEAD"), and `GET /health#x` (a fragment, which Elysia
 * kept in the path it looked up). The not-found branch of src/http/server.ts called methodNotAllowed with
 * the collapsed path, which answered 405 for any method of a listed path. Now a 405 never lists the
 * method it refuses: repeated slashes are read as one on the API paths only (README "Base-URL
 * mistakes"), so `//health` is a 404 that names the path to ask for. (Bun's fetch sends `/health` for
 * `http://h//health`, so the test uses raw sockets.) Also `OPTIONS /health/` was a 404 while
 * `GET /health/` is 200: it is the 204 of `OPTIONS /health` now.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { exchange } from "../support/raw-http.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  host: 127.0.0.1
${fakeProviders([["oai", "openai"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** Sends `method path` over a raw socket (HTTP/1.1, Host 127.0.0.1:PORT, Connection: close): status and body. */
async function raw(method: string, path: string): Promise<{ status: number; body: string }> {
  const { status, body } = await exchange(gw.url, `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${new URL(gw.url).port}\r\nConnection: close\r\n\r\n`);
  return { status, body };
}

test("GET //health is a 404 naming /health, not a 405 that says GET is allowed", async () => {
  const { status, body } = await raw("GET", "//health");
  // before: 405 {"error":{"message":"The method GET is not allowed on /health; it takes GET, HEAD or OPTIONS.",…}}
  expect(status).toBe(404);
  expect(JSON.parse(body).error.message).toBe(
    "Unknown path: GET //health (repeated slashes are read as one only on the API paths under /v1 and /v1beta: ask for /health).",
  );
});

test("HEAD //health, GET //metrics and OPTIONS //health are 404s, not 405s", async () => {
  // before: [405, 405, 405]
  expect([(await raw("HEAD", "//health")).status, (await raw("GET", "//metrics")).status, (await raw("OPTIONS", "//health")).status]).toEqual([404, 404, 404]);
});

test("OPTIONS /health/ is answered as OPTIONS /health, as GET /health/ is as GET /health", async () => {
  // before: OPTIONS /health/ was a 404
  expect([(await raw("GET", "/health/")).status, (await raw("OPTIONS", "/health/")).status, (await raw("OPTIONS", "/health")).status]).toEqual([200, 204, 204]);
});

/**
 * The same contradiction for a target with a fragment (never sent by a browser, but by hand-written
 * checks: `GET /health#x`): Elysia looks the path up with the "#x" and finds no route, and the
 * not-found branch read the parsed path ("/health") and answered 405 "The method GET is not allowed on
 * /health; it takes GET, HEAD or OPTIONS." Now a 404 naming the target as sent.
 */
test("GET /health#x is a 404 that says a target carries no fragment", async () => {
  const { status, body } = await raw("GET", "/health#x");
  // before: 405 …"The method GET is not allowed on /health; it takes GET, HEAD or OPTIONS."
  expect(status).toBe(404);
  expect(JSON.parse(body).error.message).toBe('Unknown path: GET /health#x (a request target carries no fragment: ask for /health without "#x").');
  expect((await raw("OPTIONS", "/health#x")).status).toBe(404);
});
