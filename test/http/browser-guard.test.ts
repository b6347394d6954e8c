/**
 * The Host rule's reading of `Host` values and the client format of refusals (SPEC 2.6): which names
 * a rebinding attacker could control (domain names) and which it cannot (IP literals, localhost).
 * The rules as a client meets them are tested through the gateway in test/e2e/browser-guard.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { browserGuard, clientSurface, formatForPath, hostAllowed, parseHostHeader, pathOf, requestUrl, type BrowserPolicy } from "../../src/http/browser-guard.ts";

const policy: BrowserPolicy = { bindHost: "127.0.0.1", allowedHosts: ["gateway.lan"], corsOrigins: [] };

describe("Host rule", () => {
  test("loopback names, IP literals, the bind host and allowed hosts pass, with or without port", () => {
    for (const h of ["localhost", "LOCALHOST:20128", "127.0.0.1", "127.0.0.1:1", "10.1.2.3:8080", "[::1]", "[::1]:20128", "[fe80::1%25eth0]:80", "[::ffff:127.0.0.1]", "gateway.lan", "Gateway.LAN:20128"]) {
      expect(hostAllowed(h, policy)).toBe(true);
    }
    expect(hostAllowed("box.local", { ...policy, bindHost: "box.local" })).toBe(true);
    expect(hostAllowed(null, policy)).toBe(true);
  });

  test("any other domain name is refused, including ones that resolve to loopback", () => {
    for (const h of ["evil.example", "evil.example:20128", "127.0.0.1.nip.io", "localhost.evil.example", "localtest.me", "gateway.lan.evil.example", "2130706433", "0x7f000001", "127.1", "", " ", "a b", "evil.example:port", "[::1", "[::1]x", "[zz]"]) {
      expect(hostAllowed(h, policy)).toBe(false);
    }
  });

  test("a name accepted under one policy is checked again under another (a reloaded config)", () => {
    // The last accepted Host is remembered with the policy's names it was accepted under (issue 17).
    expect(hostAllowed("box.local", { ...policy, bindHost: "box.local" })).toBe(true);
    expect(hostAllowed("box.local", policy)).toBe(false);
    expect(hostAllowed("box.local:20128", { ...policy, allowedHosts: ["box.local"] })).toBe(true);
    expect(hostAllowed("box.local:20128", { ...policy, allowedHosts: ["box.local"] })).toBe(true);
    expect(hostAllowed("box.local:20128", { ...policy, allowedHosts: ["other.lan"] })).toBe(false);
    expect(hostAllowed("box.local:20128", policy)).toBe(false);
  });

  test("parseHostHeader keeps IPv6 brackets and drops the port", () => {
    expect(parseHostHeader("[::1]:20128")).toEqual({ name: "[::1]", ip: true });
    expect(parseHostHeader("Example.COM:80")).toEqual({ name: "example.com", ip: false });
    expect(parseHostHeader("256.1.1.1")).toEqual({ name: "256.1.1.1", ip: false });
  });
});

describe("refusals speak the client's format", () => {
  test("by path (and anthropic-version on the model list)", () => {
    const none = new Headers();
    expect(formatForPath("/v1/messages", none)).toBe("anthropic-messages");
    expect(formatForPath("/v1/v1/messages/count_tokens", none)).toBe("anthropic-messages");
    expect(formatForPath("/v1beta/models/gemini-2.5-pro:streamGenerateContent", none)).toBe("gemini");
    expect(formatForPath("/v1/models/gemini-2.5-pro:generateContent", none)).toBe("gemini");
    expect(formatForPath("/v1/responses", none)).toBe("openai-responses");
    expect(formatForPath("/v1/models", new Headers({ "anthropic-version": "2023-06-01" }))).toBe("anthropic-messages");
    expect(formatForPath("/v1/models", none)).toBe("openai-chat");
    expect(formatForPath("/admin/api/keys", none)).toBe("openai-chat");
  });

  test("one rule for unknown paths: the path's family first, then who the headers say asks", () => {
    const none = new Headers();
    const anthropic = new Headers({ "anthropic-version": "2023-06-01" });
    const goog = new Headers({ "x-goog-api-key": "k" });
    expect(formatForPath("/v1/messages/batches", none)).toBe("anthropic-messages");
    expect(formatForPath("/v1/messagesX", goog)).toBe("anthropic-messages");
    expect(formatForPath("/v1beta/cachedContents", anthropic)).toBe("gemini");
    expect(formatForPath("/v1/complete", anthropic)).toBe("anthropic-messages");
    expect(formatForPath("/upload/v1beta/files", goog)).toBe("gemini");
    expect(formatForPath("/v1/chat/completions", goog)).toBe("openai-chat");
    expect(formatForPath("/admin/api/keys", anthropic)).toBe("openai-chat");
    expect(formatForPath("/v1/embeddings", none)).toBe("openai-chat");
  });
});

describe("what server.cors_origins opens: the client API only", () => {
  test("/v1 and /v1beta and below, /health and /api/hello are the client surface; the admin API, /metrics, /dashboard and look-alikes are not", () => {
    for (const p of ["/v1", "/v1/chat/completions", "/v1/models", "/v1/models/gemini-2.5:generateContent", "/v1beta", "/v1beta/models/x:streamGenerateContent", "/health", "/api/hello"]) expect([p, clientSurface(p)]).toEqual([p, true]);
    for (const p of ["/admin/api/keys", "/admin/api", "/metrics", "/dashboard", "/dashboard/login", "/v1x", "/v1betax/models", "/", "/V1/chat/completions"]) expect([p, clientSurface(p)]).toEqual([p, false]);
  });

  test("a listed origin's preflight to the admin API is refused without CORS headers; to /v1 it is answered", async () => {
    const listed: BrowserPolicy = { ...policy, corsOrigins: ["http://localhost:5173"] };
    const ask = (path: string) =>
      browserGuard(new Request(`http://127.0.0.1:20128${path}`, { method: "OPTIONS", headers: { host: "127.0.0.1:20128", origin: "http://localhost:5173", "access-control-request-method": "POST" } }), listed);
    const admin = ask("/admin/api/keys");
    expect(admin.response?.status).toBe(403);
    expect(admin.response?.headers.get("access-control-allow-origin")).toBeNull();
    const v1 = ask("/v1/chat/completions");
    expect(v1.response?.status).toBe(204);
    expect(v1.response?.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });
});

describe("the path of a request URL", () => {
  test("a full URL's path without its query; a bare request target (no or an empty Host) is its own path", () => {
    const cases: [string, string][] = [
      ["http://127.0.0.1:20128/v1/chat/completions?x=1", "/v1/chat/completions"],
      ["http://127.0.0.1:20128//v1//chat/completions", "//v1//chat/completions"],
      ["http://127.0.0.1:20128", "/"],
      ["/v1/chat/completions", "/v1/chat/completions"],
      ["/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse", "/v1beta/models/gem/gemini-x:streamGenerateContent"],
      ["//v1//messages?beta=true", "//v1//messages"],
      ["/", "/"],
    ];
    expect(cases.map(([url]) => [url, pathOf(url)])).toEqual(cases);
  });

  test("requestUrl reads a bare request target as a path of http://localhost, a full URL as it is", () => {
    expect([requestUrl("/v1/models/oai/x?key=k").pathname, requestUrl("//v1//models").pathname, requestUrl("/v1/models/oai/x").host]).toEqual(["/v1/models/oai/x", "//v1//models", "localhost"]);
    expect(requestUrl("http://127.0.0.1:20128/admin/api/keys").href).toBe("http://127.0.0.1:20128/admin/api/keys");
  });
});
