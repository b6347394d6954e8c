/**
 * The admin API's access rule comes before its 405 and 404 (SPEC 9.3, 2.6): with `require_api_key` on,
 * a caller without credentials gets the 401 whatever the method or path (GET, POST, DELETE, PATCH,
 * OPTIONS; a path no route serves), never the `Allow` list of a path or a 404 that tells which paths
 * exist; a key without the admin scope gets its 403; an admin key gets the 405 with `Allow` (and the
 * 404). A CORS preflight is answered as on `/v1` (the browser guard): 204 with the exact origin for a
 * configured origin, 403 without CORS headers for any other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const ADMIN_KEY = "sy-e2e-admin-method-admin-4f1a2b";
const PLAIN_KEY = "sy-e2e-admin-method-plain-9d3c7e";
const YAML = `
server:
  require_api_key: true
  cors_origins: ["http://localhost:5173"]
${fakeProviders([["oai", "openai"]])}keys:
  - name: plain
    key: env:PLAIN_KEY
  - name: ops
    key: env:ADMIN_KEY
    scopes: [admin]
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { ADMIN_KEY, PLAIN_KEY } });
});
afterAll(async () => {
  await gw?.stop();
});

/** Status, `Allow` and the error's type and code of one request. */
async function ask(method: string, path: string, key?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: method === "GET" || method === "OPTIONS" || method === "HEAD" ? undefined : "{}",
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  return { status: res.status, allow: res.headers.get("allow"), type: body?.error?.type, code: body?.error?.code, headers: res.headers };
}

/** Method, path, and the `Allow` an admin key is answered (null: a route serves it, or none: 404). */
const CASES: Array<[string, string, string | null]> = [
  ["PATCH", "/admin/api/keys", "GET, HEAD, POST"],
  ["DELETE", "/admin/api/keys", "GET, HEAD, POST"],
  ["OPTIONS", "/admin/api/keys", "GET, HEAD, POST"],
  ["POST", "/admin/api/settings", "GET, HEAD, PATCH"],
  ["DELETE", "/admin/api/settings", "GET, HEAD, PATCH"],
  ["OPTIONS", "/admin/api/settings", "GET, HEAD, PATCH"],
  ["GET", "/admin/api/dry-run", "POST"],
  ["POST", "/admin/api/keys/some-key", "PATCH, DELETE"],
  ["OPTIONS", "/admin/api/keys/some-key", "PATCH, DELETE"],
];

describe("admin API: the 401 before the 405", () => {
  test("without credentials: 401 for every method and path, no Allow (it was the 405 with Allow, or a 404)", async () => {
    for (const [method, path] of [...CASES.map(([m, p]) => [m, p] as const), ["GET", "/admin/api/keys"] as const, ["POST", "/admin/api/keys"] as const, ["DELETE", "/admin/api/keys/some-key"] as const, ["GET", "/admin/api/no-such-thing"] as const, ["OPTIONS", "/admin/api/no-such-thing"] as const]) {
      const r = await ask(method, path);
      expect([method, path, r.status, r.allow, r.type]).toEqual([method, path, 401, null, "authentication_error"]);
    }
  });

  test("a wrong key: 401; a key without the admin scope: 403, before any 405", async () => {
    for (const [method, path] of CASES) {
      expect([method, path, (await ask(method, path, "sy-e2e-admin-method-wrong-000000")).status]).toEqual([method, path, 401]);
      const r = await ask(method, path, PLAIN_KEY);
      expect([method, path, r.status, r.allow, r.type]).toEqual([method, path, 403, null, "permission_error"]);
    }
  });

  test("with an admin key: the 405 with Allow for a method a path does not take, OPTIONS included; 404 for an unknown path; the right method is served", async () => {
    for (const [method, path, allow] of CASES) {
      const r = await ask(method, path, ADMIN_KEY);
      expect([method, path, r.status, r.allow, r.code]).toEqual([method, path, 405, allow, "method_not_allowed"]);
    }
    const unknown = await ask("GET", "/admin/api/no-such-thing", ADMIN_KEY);
    expect([unknown.status, unknown.code]).toEqual([404, "unknown_url"]);
    expect((await ask("GET", "/admin/api/keys", ADMIN_KEY)).status).toBe(200);
    expect((await ask("DELETE", "/admin/api/keys/no-such-key", ADMIN_KEY)).status).toBe(404);
  });

  test("CORS preflights: a configured origin gets 204 with its origin echoed on /v1 only (server.cors_origins opens the client API), any other a 403 without CORS headers", async () => {
    for (const path of ["/admin/api/keys", "/admin/api/settings", "/v1/chat/completions"]) {
      const ok = await ask("OPTIONS", path, undefined, { origin: "http://localhost:5173", "access-control-request-method": "POST" });
      const client = path.startsWith("/v1/");
      expect([path, ok.status, ok.headers.get("access-control-allow-origin")]).toEqual([path, client ? 204 : 403, client ? "http://localhost:5173" : null]);
      const evil = await ask("OPTIONS", path, undefined, { origin: "https://evil.example", "access-control-request-method": "DELETE" });
      expect([path, evil.status, evil.headers.get("access-control-allow-origin"), evil.allow]).toEqual([path, 403, null, null]);
    }
  });
});
