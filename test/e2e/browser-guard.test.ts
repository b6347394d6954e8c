/**
 * Browsers and the loopback exemption (SPEC 2.6, G-6) through a real gateway on 127.0.0.1, tried the
 * way an attacker's web page would: a foreign Host (DNS rebinding) is refused on every path family
 * with nothing reaching the upstream; loopback names, IP literals and configured hosts are served; a
 * foreign Origin without a key is refused (text/plain "simple" requests and JSON alike, on /v1 and the
 * admin API) with no upstream call and no key created, and served with a valid client key; CORS
 * preflights and headers only for `server.cors_origins`, with the exact origin echoed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const CLIENT_KEY = "sy-e2e-browser-client-key-7c1d2e";
const ADMIN_KEY = "sy-e2e-browser-admin-key-0a9b8c";
const YAML = `
server:
  host: 127.0.0.1
  allowed_hosts: [gateway.lan]
  cors_origins: ["http://localhost:5173"]
${fakeProviders([["anth", "anthropic"], ["oai", "openai"]])}keys:
  - name: laptop
    key: env:CLIENT_KEY
  - name: ops
    key: env:ADMIN_KEY
    scopes: [admin]
`;
const MSG = { model: "anth/claude-test", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };
const CHAT = { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] };
const EVIL = "https://evil.example";

let gw: TestGateway;
let port: number;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { CLIENT_KEY, ADMIN_KEY } });
  port = gw.app.port;
});
afterAll(async () => {
  await gw?.stop();
});

const send = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${gw.url}${path}`, { method: init.method ?? "GET", headers: init.headers, body: init.body });

/** One request per path family; `body` for the POST routes. */
const FAMILIES: Array<{ method: string; path: string; body?: unknown; format: "anthropic" | "openai" | "gemini" }> = [
  { method: "POST", path: "/v1/chat/completions", body: CHAT, format: "openai" },
  { method: "POST", path: "/v1/responses", body: { model: "oai/gpt-test", input: "hi" }, format: "openai" },
  { method: "POST", path: "/v1/messages", body: MSG, format: "anthropic" },
  { method: "POST", path: "/v1/messages/count_tokens", body: MSG, format: "anthropic" },
  { method: "GET", path: "/v1/models", format: "openai" },
  { method: "GET", path: "/v1beta/models", format: "gemini" },
  { method: "POST", path: "/v1beta/models/gemini-2.5-pro:generateContent", body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, format: "gemini" },
  { method: "GET", path: "/admin/api/accounts", format: "openai" },
  { method: "POST", path: "/admin/api/keys", body: { name: "rebound" }, format: "openai" },
  { method: "GET", path: "/admin/api/openapi.json", format: "openai" },
  { method: "GET", path: "/metrics", format: "openai" },
  { method: "GET", path: "/dashboard", format: "openai" },
  { method: "GET", path: "/health", format: "openai" },
];

/** Asserts the JSON error shape of each client format, returning the message. */
async function errorMessage(res: Response, format: "anthropic" | "openai" | "gemini"): Promise<string> {
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as any;
  if (format === "anthropic") {
    expect(body).toEqual({ type: "error", error: { type: "permission_error", message: expect.any(String) } });
    return body.error.message;
  }
  // (Bun's toMatchObject writes asymmetric matchers into the received object: read the message first.)
  const message = body.error?.message;
  expect(typeof message).toBe("string");
  if (format === "gemini") {
    expect(body.error).toMatchObject({ code: res.status, status: "PERMISSION_DENIED" });
    return message;
  }
  expect(body.error).toMatchObject({ type: "permission_error" });
  return message;
}

const keyNames = async () => ((await (await send("/admin/api/keys")).json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name);

describe("Host rule (DNS rebinding)", () => {
  for (const f of FAMILIES) {
    test(`${f.method} ${f.path} with a foreign Host is a 421 in the client's format; nothing runs`, async () => {
      const before = gw.fake.requests.length;
      const res = await send(f.path, {
        method: f.method,
        headers: { host: `rebind.evil.example:${port}`, ...(f.body ? { "content-type": "application/json" } : {}) },
        body: f.body ? JSON.stringify(f.body) : undefined,
      });
      expect(res.status).toBe(421);
      const message = await errorMessage(res, f.format);
      expect(message).toContain("rebind.evil.example");
      expect(message).toContain("server.allowed_hosts");
      expect(gw.fake.requests.length).toBe(before);
    });
  }

  test("a WebSocket upgrade with a foreign Host is refused before anything else", async () => {
    const res = await send("/v1/responses", {
      headers: { host: "rebind.evil.example", connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(421);
    expect(await errorMessage(res, "openai")).toContain("server.allowed_hosts");
  });

  test("no key was created through a rebound Host", async () => {
    expect(await keyNames()).not.toContain("rebound");
  });

  const SERVED = ["localhost", "localhost:PORT", "127.0.0.1", "127.0.0.1:PORT", "[::1]", "[::1]:PORT", "gateway.lan", "GATEWAY.lan:PORT", "192.168.1.20"];
  for (const written of SERVED) {
    test(`Host ${written} is served on /v1, the admin API and /metrics`, async () => {
      const host = written.replace("PORT", String(port));
      const before = gw.fake.requests.length;
      const chat = await send("/v1/chat/completions", { method: "POST", headers: { host, "content-type": "application/json" }, body: JSON.stringify(CHAT) });
      expect(chat.status).toBe(200);
      expect(((await chat.json()) as any).choices[0].message.role).toBe("assistant");
      expect(gw.fake.requests.length).toBe(before + 1);
      const accounts = await send("/admin/api/accounts", { headers: { host } });
      expect(accounts.status).toBe(200);
      expect(((await accounts.json()) as any).accounts.map((a: { id: string }) => a.id).sort()).toEqual(["anth-1", "oai-1"]);
      expect((await send("/metrics", { headers: { host } })).status).toBe(200);
    });
  }
});

describe("Origin rule (cross-site requests)", () => {
  const ATTEMPTS = [
    { name: "text/plain to /v1/messages", path: "/v1/messages", type: "text/plain", body: MSG, format: "anthropic" as const },
    { name: "JSON to /v1/messages", path: "/v1/messages", type: "application/json", body: MSG, format: "anthropic" as const },
    { name: "text/plain to /v1/chat/completions", path: "/v1/chat/completions", type: "text/plain;charset=UTF-8", body: CHAT, format: "openai" as const },
    { name: "JSON to /v1/chat/completions", path: "/v1/chat/completions", type: "application/json", body: CHAT, format: "openai" as const },
    { name: "text/plain to POST /admin/api/keys", path: "/admin/api/keys", type: "text/plain", body: { name: "drive-by" }, format: "openai" as const },
    { name: "JSON to POST /admin/api/keys", path: "/admin/api/keys", type: "application/json", body: { name: "drive-by-json" }, format: "openai" as const },
  ];
  for (const a of ATTEMPTS) {
    test(`a foreign Origin without a key, ${a.name}: 403, nothing upstream`, async () => {
      const before = gw.fake.requests.length;
      const res = await send(a.path, { method: "POST", headers: { origin: EVIL, "content-type": a.type }, body: JSON.stringify(a.body) });
      expect(res.status).toBe(403);
      const message = await errorMessage(res, a.format);
      expect(message).toContain(EVIL);
      expect(message).toContain("server.cors_origins");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(gw.fake.requests.length).toBe(before);
    });
  }

  test("no key was created from a foreign origin", async () => {
    const names = await keyNames();
    expect(names).not.toContain("drive-by");
    expect(names).not.toContain("drive-by-json");
  });

  test("reading the admin API from a foreign origin is refused", async () => {
    const res = await send("/admin/api/accounts", { headers: { origin: EVIL } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const metrics = await send("/metrics", { headers: { origin: "null" } });
    expect(metrics.status).toBe(403);
  });

  test("a placeholder key from a foreign origin is not enough: the key is checked like a remote caller's", async () => {
    const before = gw.fake.requests.length;
    const res = await send("/v1/messages", { method: "POST", headers: { origin: EVIL, "content-type": "text/plain", "x-api-key": "sk-ant-placeholder" }, body: JSON.stringify(MSG) });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.type).toBe("authentication_error");
    const admin = await send("/admin/api/keys", { method: "POST", headers: { origin: EVIL, authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ name: "no-admin-scope" }) });
    expect(admin.status).toBe(403); // a valid key without the admin scope
    expect(await keyNames()).not.toContain("no-admin-scope");
    expect(gw.fake.requests.length).toBe(before);
  });

  test("with a valid client key, a foreign-origin request is served (and attributed)", async () => {
    const before = gw.fake.requests.length;
    const res = await send("/v1/messages", { method: "POST", headers: { origin: EVIL, "content-type": "text/plain", "x-api-key": CLIENT_KEY }, body: JSON.stringify(MSG) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).content[0].type).toBe("text");
    expect(gw.fake.requests.length).toBe(before + 1);
    const trace = (await (await send(`/admin/api/route-traces/${res.headers.get("x-switchyard-route-id")}`)).json()) as any;
    expect(trace.keyName).toBe("laptop");
    // Served, but not readable by that page: its origin is not in cors_origins.
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const admin = await send("/admin/api/keys", { method: "POST", headers: { origin: EVIL, "x-api-key": ADMIN_KEY, "content-type": "application/json" }, body: JSON.stringify({ name: "made-with-admin-key" }) });
    expect(admin.status).toBe(201);
    expect(await keyNames()).toContain("made-with-admin-key");
  });

  test("the gateway's own origin keeps the loopback exemption (the dashboard's pages)", async () => {
    for (const [host, origin] of [
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
      [`localhost:${port}`, `http://localhost:${port}`],
      [`gateway.lan:${port}`, `http://gateway.lan:${port}`],
    ]) {
      const res = await send("/v1/chat/completions", { method: "POST", headers: { host, origin, "content-type": "application/json" }, body: JSON.stringify(CHAT) });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect((await send("/admin/api/accounts", { headers: { host, origin } })).status).toBe(200);
    }
    // Another port on localhost is another origin.
    const other = await send("/admin/api/accounts", { headers: { host: `localhost:${port}`, origin: "http://localhost:9999" } });
    expect(other.status).toBe(403);
  });

  test("/health stays open to everyone", async () => {
    const res = await send("/health", { headers: { origin: EVIL } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).status).toBe("ok");
  });
});

describe("CORS rule", () => {
  const preflight = (origin: string, path = "/v1/chat/completions") =>
    send(path, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" } });

  test("a preflight from a foreign origin gets no Access-Control-Allow-Origin", async () => {
    for (const path of ["/v1/chat/completions", "/v1/messages", "/admin/api/keys"]) {
      const res = await preflight(EVIL, path);
      expect(res.status).toBe(403);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-allow-methods")).toBeNull();
      expect(res.headers.get("vary")).toContain("Origin");
      expect(await errorMessage(res, path === "/v1/messages" ? "anthropic" : "openai")).toContain("server.cors_origins");
    }
  });

  test("a configured origin's preflight gets exactly its origin back, never *", async () => {
    const res = await preflight("http://localhost:5173");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, authorization");
    expect(res.headers.get("vary")).toContain("Origin");
  });

  test("a configured origin is served with its origin echoed and keeps the loopback exemption", async () => {
    const before = gw.fake.requests.length;
    const res = await send("/v1/chat/completions", { method: "POST", headers: { origin: "http://localhost:5173", "content-type": "application/json" }, body: JSON.stringify({ ...CHAT, stream: true }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(res.headers.get("access-control-expose-headers")).toContain("x-switchyard-route-id");
    // the header the OpenAI and Anthropic SDKs obey before retrying (pipeline/attempt-loop.ts), readable by a browser SDK
    expect(res.headers.get("access-control-expose-headers")).toContain("x-should-retry");
    expect(res.headers.get("vary")).toContain("Origin");
    expect(await res.text()).toContain("data: [DONE]");
    expect(gw.fake.requests.length).toBe(before + 1);
    const errorReply = await send("/v1/chat/completions", { method: "POST", headers: { origin: "http://localhost:5173", "content-type": "application/json" }, body: "{" });
    expect(errorReply.status).toBe(400);
    expect(errorReply.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  test("Gemini's routes: a configured origin's call and the refusal of an unknown method carry its origin; its preflight is answered", async () => {
    const url = "/v1beta/models/anth/claude-test";
    const headers = { origin: "http://localhost:5173", "content-type": "application/json" };
    const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    const served = await send(`${url}:generateContent`, { method: "POST", headers, body });
    expect(served.status).toBe(200);
    expect(served.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(served.headers.get("vary")).toContain("Origin");
    expect(((await served.json()) as any).candidates[0].content.parts[0].text).toBeTruthy();
    const refused = await send(`${url}:embedContent`, { method: "POST", headers, body });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(((await refused.json()) as any).error.status).toBe("NOT_FOUND");
    const preflight = await send(`${url}:streamGenerateContent`, { method: "OPTIONS", headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  test("a configured origin gets the client API only: the admin API and /metrics answer it as a foreign origin (no CORS headers, no loopback exemption)", async () => {
    const origin = "http://localhost:5173";
    for (const path of ["/admin/api/keys", "/admin/api/settings", "/metrics", "/dashboard"]) {
      const res = await preflight(origin, path);
      expect([path, res.status, res.headers.get("access-control-allow-origin"), res.headers.get("access-control-allow-methods")]).toEqual([path, 403, null, null]);
      expect(res.headers.get("vary")).toContain("Origin");
    }
    // A page on that origin cannot mint a key (it could until 2026-12-06), nor read one.
    const minted = await send("/admin/api/keys", { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify({ name: "from-cors-origin" }) });
    expect(minted.status).toBe(403);
    expect(minted.headers.get("access-control-allow-origin")).toBeNull();
    expect(await errorMessage(minted, "openai")).toContain("client API (/v1, /v1beta) only");
    const read = await send("/admin/api/keys", { headers: { origin } });
    expect([read.status, read.headers.get("access-control-allow-origin")]).toEqual([403, null]);
    expect((await send("/metrics", { headers: { origin } })).status).toBe(403);
    // With a key it is a remote caller: a key without the admin scope is refused, by name, still without CORS headers.
    const plain = await send("/admin/api/keys", { method: "POST", headers: { origin, authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ name: "from-cors-origin" }) });
    expect([plain.status, plain.headers.get("access-control-allow-origin")]).toEqual([403, null]);
    expect(await keyNames()).not.toContain("from-cors-origin");
    // The same origin on the client API, as before: its preflight and call, CORS headers and the loopback exemption.
    expect((await preflight(origin, "/v1/chat/completions")).headers.get("access-control-allow-origin")).toBe(origin);
    const chat = await send("/v1/chat/completions", { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify(CHAT) });
    expect([chat.status, chat.headers.get("access-control-allow-origin")]).toEqual([200, origin]);
  });

  test("a request without Origin gets no CORS headers", async () => {
    const res = await send("/v1/models");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});
