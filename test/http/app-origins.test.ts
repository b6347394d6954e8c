/**
 * Apps' own origins in `server.cors_origins` (SPEC 2.6) through a real gateway on 127.0.0.1: Obsidian
 * (Electron, `Origin: app://obsidian.md`), Tauri apps (`tauri://localhost`) and browser extensions
 * (`chrome-extension://<id>`) send origins whose `URL.origin` is "null". A listed one gets its preflight
 * answered and `Access-Control-Allow-Origin` on the POST (no key needed from loopback, as for a listed
 * web origin); an unlisted app origin and the literal `null` are refused like any foreign page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const EXTENSION = "chrome-extension://abcdefghijklmnopabcdefghijklmnop";
const APPS = ["app://obsidian.md", "tauri://localhost", EXTENSION];
const YAML = `
server:
  host: 127.0.0.1
  cors_origins: ["APP://Obsidian.md/", "tauri://localhost", "${EXTENSION}"]
${fakeProviders([["oai", "openai"]])}`;
const CHAT = JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

const preflight = (origin: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
  });
const post = (origin: string) => fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: CHAT });

describe("listed app origins", () => {
  for (const origin of APPS) {
    test(`${origin}: preflight answered and the POST served, both with Access-Control-Allow-Origin`, async () => {
      const pre = await preflight(origin);
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe(origin);
      expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
      const before = gw.fake.requests.length;
      const res = await post(origin);
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("vary")).toContain("Origin");
      expect(((await res.json()) as { object: string }).object).toBe("chat.completion");
      expect(gw.fake.requests.length).toBe(before + 1);
    });
  }
});

describe("unlisted app origins and null", () => {
  for (const origin of ["app://other.app", "tauri://evil", "chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba", "null"]) {
    test(`${origin}: preflight 403 without CORS headers, key-less POST 403 with nothing sent upstream`, async () => {
      const pre = await preflight(origin);
      expect(pre.status).toBe(403);
      expect(pre.headers.get("access-control-allow-origin")).toBeNull();
      const before = gw.fake.requests.length;
      const res = await post(origin);
      expect(res.status).toBe(403);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
      expect(gw.fake.requests.length).toBe(before);
    });
  }
});
