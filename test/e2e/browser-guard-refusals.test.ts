/**
 * The browser rules' refusals are seen by the operator (SPEC 2.6, src/http/browser-refusals.ts), through
 * a real gateway on 127.0.0.1: a foreign Origin's POST to /v1/chat/completions (Bun's own route), a
 * foreign Host (DNS rebinding), a WebSocket upgrade from a foreign Origin, an admin path, a preflight, the
 * dashboard and /metrics each keep their status and now leave a count in
 * `switchyard_browser_refusals_total` (by reason and surface) and one `warn` log line naming the method,
 * the path without its query, the reason and the refused value, its control characters escaped. 100
 * refusals from one origin count 100 and log one line. Allowed requests add neither.
 * Before the fix (session 46) none of them left a log line or a metric.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const YAML = `
server:
  host: 127.0.0.1
  cors_origins: ["http://localhost:5173"]
${fakeProviders([["oai", "openai"]])}`;
const CHAT = { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

const send = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${gw.url}${path}`, { method: init.method ?? "GET", headers: init.headers, body: init.body });

/** The value of `switchyard_browser_refusals_total{reason,surface}` in a scrape (0 when the series is absent). */
async function refusals(reason: string, surface: string): Promise<number> {
  const res = await send("/metrics");
  expect(res.status).toBe(200);
  const text = await res.text();
  const line = text.split("\n").find((l) => l.startsWith(`switchyard_browser_refusals_total{reason="${reason}",surface="${surface}"} `));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

type RefusalLine = { level: string; msg: string; reason: string; surface: string; status: number; method: string; path: string; host?: string; origin?: string; more?: number };
/** The refusal log lines written so far naming `field` = `value`. */
const refusalLines = (field: "host" | "origin", value: string): RefusalLine[] =>
  gw.logs
    .map((l) => JSON.parse(l) as RefusalLine)
    .filter((l) => l.msg === "browser rules refused a request" && l[field] === value);

describe("each refusal of the browser rules is counted and logged", () => {
  test("/metrics lists switchyard_browser_refusals_total from the start", async () => {
    const text = await (await send("/metrics")).text();
    expect(text).toContain("# HELP switchyard_browser_refusals_total Requests the browser rules (Host, Origin, CORS) refused");
    expect(text).toContain("# TYPE switchyard_browser_refusals_total counter");
  });

  test("a foreign Origin's POST /v1/chat/completions: 403 as before, origin/api counted, one warn line", async () => {
    const origin = "https://evil-chat.example";
    const before = await refusals("origin", "api");
    const upstream = gw.fake.requests.length;
    const res = await send("/v1/chat/completions?trace=1", { method: "POST", headers: { origin, "content-type": "text/plain" }, body: JSON.stringify(CHAT) });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.code).toBe("origin_not_allowed");
    expect(gw.fake.requests.length).toBe(upstream);
    expect(refusalLines("origin", origin)).toEqual([
      {
        level: "warn",
        time: expect.any(Number),
        msg: "browser rules refused a request",
        reason: "origin",
        surface: "api",
        status: 403,
        method: "POST",
        path: "/v1/chat/completions",
        origin,
        hint: expect.stringContaining("server.cors_origins"),
      } as never,
    ]);
    expect(await refusals("origin", "api")).toBe(before + 1);
  });

  test("a foreign Host (DNS rebinding): 421 as before, host/api counted, one line naming the Host", async () => {
    const host = `rebind-one.evil.example:${gw.app.port}`;
    const before = await refusals("host", "api");
    const res = await send("/v1/chat/completions", { method: "POST", headers: { host, "content-type": "application/json" }, body: JSON.stringify(CHAT) });
    expect(res.status).toBe(421);
    expect(((await res.json()) as any).error.code).toBe("host_not_allowed");
    const lines = refusalLines("host", host);
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ level: "warn", reason: "host", surface: "api", status: 421, method: "POST", path: "/v1/chat/completions" });
    expect(lines[0]!.origin).toBeUndefined();
    expect(await refusals("host", "api")).toBe(before + 1);
  });

  test("a WebSocket upgrade from a foreign Origin: 403 as before, origin/websocket counted, one line", async () => {
    const origin = "https://evil-socket.example";
    const before = await refusals("origin", "websocket");
    const res = await send("/v1/responses", {
      headers: { origin, connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("upgrade")).toBeNull();
    const lines = refusalLines("origin", origin);
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ reason: "origin", surface: "websocket", status: 403, method: "GET", path: "/v1/responses" });
    expect(await refusals("origin", "websocket")).toBe(before + 1);
  });

  test("an admin path from a foreign Origin: 403 as before, origin/admin counted, one line", async () => {
    const origin = "https://evil-admin.example";
    const before = await refusals("origin", "admin");
    const res = await send("/admin/api/keys", { method: "POST", headers: { origin, "content-type": "text/plain" }, body: JSON.stringify({ name: "drive-by" }) });
    expect(res.status).toBe(403);
    const lines = refusalLines("origin", origin);
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ reason: "origin", surface: "admin", status: 403, method: "POST", path: "/admin/api/keys" });
    expect(await refusals("origin", "admin")).toBe(before + 1);
  });

  test("a foreign origin's CORS preflight: 403 as before, preflight/api counted, one line", async () => {
    const origin = "https://evil-preflight.example";
    const before = await refusals("preflight", "api");
    const res = await send("/v1/chat/completions", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(refusalLines("origin", origin).map((l) => [l.reason, l.surface, l.method, l.path])).toEqual([["preflight", "api", "OPTIONS", "/v1/chat/completions"]]);
    expect(await refusals("preflight", "api")).toBe(before + 1);
  });

  test("the dashboard, /metrics and a Gemini route are counted under their own surfaces", async () => {
    const host = "rebind-two.evil.example";
    const before = [await refusals("host", "dashboard"), await refusals("host", "metrics"), await refusals("host", "api")];
    expect((await send("/dashboard", { headers: { host } })).status).toBe(421);
    expect((await send("/metrics", { headers: { host } })).status).toBe(421);
    const gemini = await send("/v1beta/models/gemini-2.5-pro:generateContent", { method: "POST", headers: { host, "content-type": "application/json" }, body: "{}" });
    expect(gemini.status).toBe(421);
    expect([await refusals("host", "dashboard"), await refusals("host", "metrics"), await refusals("host", "api")]).toEqual(before.map((n) => n + 1));
    // one line for the Host in the minute: the others only counted
    expect(refusalLines("host", host).map((l) => [l.surface, l.path])).toEqual([["dashboard", "/dashboard"]]);
  });

  test("100 refusals from one origin: 100 in the metric, one log line", async () => {
    const origin = "https://evil-flood.example";
    const before = await refusals("origin", "api");
    for (let i = 0; i < 100; i++) {
      const res = await send("/v1/chat/completions", { method: "POST", headers: { origin, "content-type": "text/plain" }, body: JSON.stringify(CHAT) });
      expect(res.status).toBe(403);
      await res.arrayBuffer();
    }
    expect(await refusals("origin", "api")).toBe(before + 100);
    expect(refusalLines("origin", origin).length).toBe(1);
  });

  test("a refused value's control characters are escaped and its length is capped in the line", async () => {
    // obs-text bytes in a header are read as Latin-1: 0x9b is the C1 control CSI, a terminal escape.
    const raw = "https://evil.example/\u009b31m" + "x".repeat(400);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(gw.app.port, "127.0.0.1", () => {
        socket.write(Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${raw}\r\nConnection: close\r\n\r\n`, "latin1"));
      });
      let got = "";
      socket.on("data", (d) => (got += d.toString("latin1")));
      socket.on("end", () => resolve(got));
      socket.on("error", reject);
    });
    expect(answer.startsWith("HTTP/1.1 403")).toBe(true);
    const line = gw.logs.map((l) => JSON.parse(l) as RefusalLine).find((l) => l.msg === "browser rules refused a request" && l.origin?.startsWith("https://evil.example/"));
    expect(line?.origin).toBe("https://evil.example/\\u009b31m" + "x".repeat(200 - "https://evil.example/\u009b31m".length) + "…");
    expect(line).toMatchObject({ method: "GET", path: "/v1/models", surface: "api" });
  });

  test("allowed requests add no count and no line", async () => {
    const lines = gw.logs.filter((l) => l.includes("browser rules refused")).length;
    const scrape = async () => ((await (await send("/metrics")).text()).match(/^switchyard_browser_refusals_total\{.*$/gm) ?? []).join("\n");
    const before = await scrape();
    expect((await send("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(CHAT) })).status).toBe(200);
    expect((await send("/v1/chat/completions", { method: "POST", headers: { origin: "http://localhost:5173", "content-type": "application/json" }, body: JSON.stringify(CHAT) })).status).toBe(200);
    expect((await send("/v1/chat/completions", { method: "OPTIONS", headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" } })).status).toBe(204);
    expect((await send("/health", { headers: { origin: "https://evil-open.example" } })).status).toBe(200);
    expect((await send("/admin/api/accounts", { headers: { host: `localhost:${gw.app.port}` } })).status).toBe(200);
    expect(await scrape()).toBe(before);
    expect(gw.logs.filter((l) => l.includes("browser rules refused")).length).toBe(lines);
  });
});
