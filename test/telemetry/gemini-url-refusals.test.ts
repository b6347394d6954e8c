/**
 * The Gemini refusals src/http/server.ts geminiApi reads from the URL alone — `:streamGenerateContent`
 * without `?alt=sse` (400), a method the gateway does not serve (404) and a path without
 * `{model}:method` (404; found in the same tryout, fixed later that day) — go through the gateway like
 * any other refused request: after the client key's check (with `require_api_key`, a caller without a
 * key gets the 401 first), with one request log line (SPEC O-4), a `switchyard_requests_total` count
 * (O-3) and a span (O-5). Found in the observability tryout of 2026-12-07: both were answered before the
 * gateway, with no line, no count and no span, where a `:generateContent` with a bad body got all three.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { until } from "../support/until.ts";

type Span = { name: string; attributes: Array<{ key: string; value: Record<string, unknown> }> };
const spans: Span[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Span[] }> }> };
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
    return Response.json({});
  },
});
const attr = (s: Span, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue));
};
afterAll(() => {
  receiver.stop(true);
});

const BODY = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
const post = (gw: TestGateway, rest: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/v1beta/models/${rest}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY });

describe("keys not required", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(undefined, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_BSP_SCHEDULE_DELAY: "100" } });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("a streamGenerateContent without alt=sse, a method not served and a path without a method are logged, counted and traced like other refused requests", async () => {
    const noAlt = await post(gw, "gem/gemini-2.5-flash:streamGenerateContent");
    expect(noAlt.status).toBe(400);
    const noAltBody = (await noAlt.json()) as { error: { code: number; status: string; message: string } };
    expect([noAltBody.error.code, noAltBody.error.status]).toEqual([400, "INVALID_ARGUMENT"]);
    expect(noAltBody.error.message).toContain("add ?alt=sse");
    const method = await post(gw, "gem/gemini-2.5-flash:embedContent");
    expect(method.status).toBe(404);
    const methodBody = (await method.json()) as { error: { code: number; status: string; message: string } };
    expect([methodBody.error.code, methodBody.error.status]).toEqual([404, "NOT_FOUND"]);
    expect(methodBody.error.message).toContain("The method embedContent is not served");
    const noMethod = await post(gw, "gem%2Ffoo");
    expect(noMethod.status).toBe(404);
    const noMethodBody = (await noMethod.json()) as { error: { code: number; status: string; message: string } };
    expect([noMethodBody.error.code, noMethodBody.error.status, noMethodBody.error.message]).toEqual([404, "NOT_FOUND", "Unknown path: POST /v1beta/models/gem%2Ffoo; expected /v1beta/models/{model}:generateContent."]);
    expect(gw.fake.requests.length).toBe(0);

    const lines = gw.logs.map((l) => JSON.parse(l) as { msg?: string; status?: number; endpoint?: string; outcome?: string; model?: string; requestId?: string });
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests.map((l) => [l.endpoint, l.model, l.outcome, l.status])).toEqual([
      ["gemini", "gem/gemini-2.5-flash", "rejected", 400],
      ["gemini", "gem/gemini-2.5-flash", "rejected", 404],
      ["gemini", "gem/foo", "rejected", 404],
    ]);
    expect(requests.map((l) => l.requestId)).toEqual([noAlt, method, noMethod].map((r) => r.headers.get("x-request-id") ?? ""));
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('switchyard_requests_total{endpoint="gemini",provider="none",outcome="rejected"} 3');

    const spanOf = (id: string | null) => spans.find((s) => attr(s, "switchyard.request_id") === id);
    await until(() => [noAlt, method, noMethod].every((r) => spanOf(r.headers.get("x-request-id")) !== undefined), 10_000, "the three spans");
    for (const [res, status, model] of [[noAlt, 400, "gem/gemini-2.5-flash"], [method, 404, "gem/gemini-2.5-flash"], [noMethod, 404, "gem/foo"]] as const) {
      const s = spanOf(res.headers.get("x-request-id"))!;
      expect([s.name, attr(s, "switchyard.endpoint"), attr(s, "switchyard.outcome"), attr(s, "error.type")]).toEqual([`chat ${model}`, "gemini", "rejected", String(status)]);
    }
  });
});

describe("require_api_key", () => {
  let gw: TestGateway;
  let secret: string;
  beforeAll(async () => {
    gw = await startGateway(`
server:
  require_api_key: true
${providersAtFake(["gem", "gemini"])}
accounts:
  - id: gem-1
    provider: gem
    api_key: env:FAKE_KEY
`);
    const made = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${gw.app.adminToken}` }, body: JSON.stringify({ name: "gem-client" }) });
    secret = ((await made.json()) as { secret: string }).secret;
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("a remote caller without a key gets the 401 first, not the URL's 400 or 404; with its key, the 400 and the 404s", async () => {
    const remote = { "x-forwarded-for": "203.0.113.9" };
    const statuses: Record<string, number> = {};
    for (const [name, rest] of [["noAlt", "gem/gemini-2.5-flash:streamGenerateContent"], ["method", "gem/gemini-2.5-flash:embedContent"], ["noMethod", "gem/foo"]] as const) {
      const none = await post(gw, rest, remote);
      statuses[`${name}, no key`] = none.status;
      expect(((await none.json()) as { error: { status: string } }).error.status).toBe("UNAUTHENTICATED");
      statuses[`${name}, wrong key`] = (await post(gw, rest, { ...remote, "x-goog-api-key": "not-a-key" })).status;
      statuses[`${name}, its key`] = (await post(gw, rest, { ...remote, "x-goog-api-key": secret })).status;
    }
    expect(statuses).toEqual({ "noAlt, no key": 401, "noAlt, wrong key": 401, "noAlt, its key": 400, "method, no key": 401, "method, wrong key": 401, "method, its key": 404, "noMethod, no key": 401, "noMethod, wrong key": 401, "noMethod, its key": 404 });
    const lines = gw.logs.map((l) => JSON.parse(l) as { msg?: string; status?: number; key?: string }).filter((l) => l.msg === "request");
    expect(lines.map((l) => [l.status, l.key])).toEqual([
      [401, undefined],
      [401, undefined],
      [400, "gem-client"],
      [401, undefined],
      [401, undefined],
      [404, "gem-client"],
      [401, undefined],
      [401, undefined],
      [404, "gem-client"],
    ]);
  });
});
