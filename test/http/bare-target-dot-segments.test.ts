/**
 * Regression test: a request with no Host (HTTP/1.0: a health check, a script) whose target has dot
 * segments (`/./`, `/../`) is answered as the same request with a Host. With a Host Bun resolves the dot
 * segments in `request.url` before routing; until 2026-12-08 src/http/request-head.ts `wholeTarget`
 * only prefixed `http://localhost` to the target as it came, so Elysia routed the unresolved path while
 * the handlers and the not-found branch read the resolved one. What a user saw without a Host:
 * - `GET /admin/api/x/../keys`: 405 "The method GET is not allowed on /admin/api/keys; it takes GET,
 *   HEAD or POST." (with a Host: 200, the key list);
 * - `GET /./health`, `GET /v1/../health`: 405 "…not allowed on /health; it takes GET, HEAD or OPTIONS."
 *   (a health check with such a path read the gateway as down);
 * - `GET /v1/models/../../admin/api/keys`: 404 "The model `keys` does not exist.";
 * - `GET /dashboard/../health`: the dashboard's HTML "No such page".
 * Now the bare target is read by the URL parser as Bun reads it with a Host (request-head.ts
 * bareTargetUrl): the same status and body. Each route's own access rules still run.
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

/** `GET path HTTP/1.0` over a raw socket, with `Host: 127.0.0.1:PORT` when `withHost`: its status and body. */
async function get(path: string, withHost: boolean): Promise<{ status: number; body: string }> {
  const { status, body } = await exchange(gw.url, `GET ${path} HTTP/1.0\r\n${withHost ? `Host: 127.0.0.1:${new URL(gw.url).port}\r\n` : ""}\r\n`);
  return { status, body };
}

for (const path of ["/./health", "/v1/../health", "/dashboard/../health", "/admin/api/x/../keys", "/v1/models/../../admin/api/keys"]) {
  test(`GET ${path} without a Host is answered as with one`, async () => {
    const hosted = await get(path, true);
    expect(hosted.status).toBe(200);
    // actual without a Host: 405 (the first four's "…not allowed…; it takes GET, …"), the dashboard's 404 page, or 404 model_not_found
    expect(await get(path, false)).toEqual(hosted);
  });
}
