/**
 * GET /admin/api/openapi.json (SPEC 9.3) from a real gateway: the OpenAPI document lists every admin
 * route (keys, usage, calls, route traces, dry run, accounts, OAuth, discovery, quota), with path
 * and query parameters and the JSON request body schema of every route that takes a body; it is behind
 * the admin guard; generating it changes nothing about how the live routes validate; and it is built
 * once per set of routes (a config reload does not change it; a route added to the app does).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { Elysia } from "elysia";
import { ADMIN_ROUTE_DOCS, adminOpenApiDocument, adminOpenApiJson } from "../../src/admin/openapi.ts";
import { VERSION } from "../../src/version.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

type Operation = {
  summary?: string;
  responses?: Record<string, any>;
  operationId?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: any }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: any }> };
};
type Doc = { openapi: string; info: { title: string; version: string }; paths: Record<string, Record<string, Operation>>; components: any };

let gw: TestGateway;
let doc: Doc;
beforeAll(async () => {
  gw = await startGateway();
  const res = await fetch(`${gw.url}/admin/api/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  doc = (await res.json()) as Doc;
});
afterAll(async () => {
  await gw?.stop();
});

const op = (method: string, path: string) => doc.paths[path]?.[method];
const operations = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, o]) => ({ method, path, o })));

describe("the admin OpenAPI document", () => {
  test("is OpenAPI 3.1 for this version, with the admin key schemes", () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toContain("switchyard");
    expect(doc.info.version).toBe(VERSION);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);
  });

  test("lists every admin route", () => {
    const expected = [
      "get /admin/api/keys",
      "post /admin/api/keys",
      "delete /admin/api/keys/{name}",
      "get /admin/api/usage",
      "get /admin/api/calls",
      "get /admin/api/route-traces/{id}",
      "post /admin/api/dry-run",
      "get /admin/api/accounts",
      "post /admin/api/accounts",
      "get /admin/api/oauth/{kind}",
      "post /admin/api/discovery",
      "get /admin/api/quota",
      "get /admin/api/openapi.json",
    ];
    const listed = operations().map(({ method, path }) => `${method} ${path}`);
    for (const e of expected) expect(listed).toContain(e);
    // Only admin routes: not the client API, /health or /metrics.
    for (const path of Object.keys(doc.paths)) expect(path.startsWith("/admin/api/")).toBe(true);
  });

  test("every listed route is documented (a summary) and every documented route exists", () => {
    for (const { method, path, o } of operations()) expect({ route: `${method} ${path}`, summary: typeof o.summary }).toEqual({ route: `${method} ${path}`, summary: "string" });
    const listed = new Set(operations().map(({ method, path }) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`));
    for (const route of Object.keys(ADMIN_ROUTE_DOCS)) expect({ route, listed: listed.has(route) }).toEqual({ route, listed: true });
  });

  test("every route that takes a body has its JSON schema", () => {
    // Actions without a body: account disable/enable/unlock, key disable/enable, a circuit's close, config reload.
    const bodiless = new Set([
      "post /admin/api/accounts/{id}/disable",
      "post /admin/api/accounts/{id}/enable",
      "post /admin/api/accounts/{id}/unlock",
      "post /admin/api/keys/{name}/disable",
      "post /admin/api/keys/{name}/enable",
      "post /admin/api/providers/{id}/close-circuit",
      "post /admin/api/config/reload",
    ]);
    for (const route of bodiless) expect(operations().some(({ method, path }) => `${method} ${path}` === route)).toBe(true);
    const withBodies = operations().filter(({ method, path }) => ["post", "put", "patch"].includes(method) && !bodiless.has(`${method} ${path}`));
    expect(withBodies.length).toBeGreaterThanOrEqual(4);
    for (const { method, path, o } of withBodies) {
      const content = o.requestBody?.content;
      expect({ route: `${method} ${path}`, types: Object.keys(content ?? {}) }).toEqual({ route: `${method} ${path}`, types: ["application/json"] });
      expect(content!["application/json"].schema.type).toBe("object");
    }
    const keys = op("post", "/admin/api/keys")!.requestBody!.content["application/json"].schema;
    expect(keys.required).toEqual(["name"]);
    expect(Object.keys(keys.properties).sort()).toEqual(["limits", "name", "scopes", "tag"]);

    const dry = op("post", "/admin/api/dry-run")!.requestBody!.content["application/json"].schema;
    expect(dry.required).toEqual(["request"]);
    expect(dry.properties.format.enum).toEqual(["openai-chat", "openai-responses", "anthropic-messages", "gemini"]);
    expect(dry.properties.endpoint.enum).toEqual(["chat", "responses", "messages", "gemini"]);
    expect(Object.keys(dry.properties)).toEqual(expect.arrayContaining(["model", "headers", "key", "key_tag"]));

    const acct = op("post", "/admin/api/accounts")!.requestBody!.content["application/json"].schema;
    expect(acct.required.sort()).toEqual(["credential", "provider"]);
    expect(acct.properties.credential.properties.type.const).toBe("oauth");
    expect(acct.properties.credential.required.sort()).toEqual(["access_token", "type"]);

    const disc = op("post", "/admin/api/discovery")!.requestBody!.content["application/json"].schema;
    expect(Object.keys(disc.properties).sort()).toEqual(["account", "provider"]);
  });

  test("every route has its success response schema and the error shape", () => {
    type Resp = { content?: Record<string, { schema?: any }> };
    for (const { method, path, o } of operations()) {
      const responses = ((o as { responses?: Record<string, Resp> }).responses ?? {}) as Record<string, Resp>;
      const ok = Object.entries(responses).filter(([status]) => status.startsWith("2"));
      const described = ok.flatMap(([, r]) => Object.entries(r.content ?? {})).filter(([, c]) => c.schema && (c.schema.type || c.schema.anyOf || c.schema.contentSchema));
      expect({ route: `${method} ${path}`, described: described.length > 0 }).toEqual({ route: `${method} ${path}`, described: true });
      const errors = Object.entries(responses).filter(([status]) => /^[45]/.test(status));
      expect(errors.length).toBeGreaterThan(6);
      for (const [, r] of errors) expect((r.content?.["application/json"]?.schema as any)?.properties?.error?.required).toEqual(["message", "type", "param", "code"]);
    }
    // The event stream is text/event-stream, each event's data described.
    const events = (op("get", "/admin/api/events") as any).responses["200"].content["text/event-stream"].schema;
    expect(events.contentSchema.anyOf.map((s: any) => s.properties.type?.const)).toEqual(["request_finished", "account_state", "alert", "keys_changed", "routing_changed", "config_reloaded", undefined, undefined, undefined]);
    // the stream's own frames, which carry no type: hello first, dropped and signed_out last
    expect(events.contentSchema.anyOf.slice(6).map((s: any) => Object.keys(s.properties).sort())).toEqual([["at", "heartbeatMs"], ["at", "reason"], ["at"]]);
    const test = (op("post", "/admin/api/accounts/{id}/test") as any).responses["200"].content["application/json"].schema;
    expect(test.required).toEqual(["ok", "status", "latency_ms", "model", "model_from"]);
  });

  test("the event stream's first frame (event: hello) is one of the described events", async () => {
    const ctl = new AbortController();
    const res = await fetch(`${gw.url}/admin/api/events`, { signal: ctl.signal });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("\n\n")) text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
    const frame = text.slice(0, text.indexOf("\n\n"));
    expect(frame).toStartWith("event: hello\n");
    const data = JSON.parse(frame.slice(frame.indexOf("data: ") + 6)) as Record<string, unknown>;
    const alternatives = (op("get", "/admin/api/events") as any).responses["200"].content["text/event-stream"].schema.contentSchema.anyOf as any[];
    const fits = alternatives.filter((s) => [...(s.required ?? [])].sort().join() === Object.keys(data).sort().join() && Object.keys(data).every((k) => s.properties[k]?.type === typeof data[k]));
    expect(fits.length).toBe(1);
  });

  test("path and query parameters are declared", () => {
    const names = (o: Operation | undefined, where: string) => (o?.parameters ?? []).filter((p) => p.in === where).map((p) => p.name).sort();
    expect(names(op("delete", "/admin/api/keys/{name}"), "path")).toEqual(["name"]);
    expect(names(op("get", "/admin/api/route-traces/{id}"), "path")).toEqual(["id"]);
    expect(names(op("get", "/admin/api/oauth/{kind}"), "path")).toEqual(["kind"]);
    expect(names(op("get", "/admin/api/usage"), "query")).toEqual(["account", "bucket", "by", "instance", "key", "model", "outcome", "provider", "since", "transport", "tz_offset"]);
    expect(op("get", "/admin/api/usage")!.parameters!.find((p) => p.name === "by")!.schema.enum).toEqual(["model", "account", "key", "provider", "instance"]);
    expect(names(op("get", "/admin/api/calls"), "query")).toEqual(["account", "after", "before", "id", "instance", "key", "limit", "model", "outcome", "provider", "since", "transport"]);
    // how a call came (try17's tryout): a filter, and a field of each call and route trace
    expect(op("get", "/admin/api/calls")!.parameters!.find((p) => p.name === "transport")!.schema.enum).toEqual(["http", "websocket", "unknown"]);
    const calls = (op("get", "/admin/api/calls") as any).responses["200"].content["application/json"].schema;
    expect(calls.properties.calls.items.properties.transport.enum).toEqual(["http", "websocket", "unknown"]);
    expect(calls.properties.calls.items.required).toContain("transport");
    const recording = (op("get", "/admin/api/calls/{id}/recording") as any).responses["200"].content["application/json"].schema;
    expect(recording.properties.transport.enum).toEqual(["http", "websocket"]);
    expect(recording.properties.response.properties.frames.items.type).toBe("string");
  });

  test("the documented GET routes without parameters answer", async () => {
    for (const { method, path } of operations()) {
      if (method !== "get" || path.includes("{")) continue;
      const res = await fetch(`${gw.url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  test("every field the usage, calls, keys (listed and created), route-trace and dry-run routes answer is in their response schema", async () => {
    // A key with a budget, a served request whose tool result the savers shorten (unpriced model), a refused one.
    const created = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "documented", limits: { budgets: [{ window: "1d", tokens: 1000000 }] } }) });
    expect(created.status).toBe(201);
    const createdAnswer = (await created.json()) as { secret: string };
    const secret = createdAnswer.secret;
    const lines = Array.from({ length: 401 }, (_, i) => (i === 200 ? "-line 200\n+line 200 changed" : ` line ${i}`)).join("\n");
    const diff = `diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,401 +1,401 @@\n${lines}\n`;
    const chat = (model: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
        body: JSON.stringify({
          model,
          messages: [
            { role: "user", content: "show the diff" },
            { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "sh", arguments: "{}" } }] },
            { role: "tool", tool_call_id: "c1", content: diff },
          ],
          tools: [{ type: "function", function: { name: "sh", parameters: { type: "object", properties: {} } } }],
        }),
      });
    const served = await chat("chat/gpt-test");
    expect(served.status).toBe(200);
    await served.text();
    const refused = await chat("nope/x");
    expect(refused.status).toBe(404);
    await refused.text();
    gw.app.settle();
    const get = async (path: string, init?: RequestInit) => {
      const res = await fetch(`${gw.url}/admin/api${path}`, init);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      return res.json();
    };
    const calls = (await get("/calls?limit=5")) as { calls: Array<Record<string, unknown>> };
    const servedCall = calls.calls.find((c) => c.requestedModel === "chat/gpt-test")!;
    expect(servedCall).toMatchObject({ unpriced: true, savedChars: expect.any(Number) });
    const refusedCall = calls.calls.find((c) => c.requestedModel === "nope/x")!;
    const answers: Array<[string, string, unknown]> = [
      ["get", "/admin/api/usage", await get("/usage?since=1h&by=key")],
      ["get", "/admin/api/usage", await get("/usage?since=1h&by=model")],
      ["get", "/admin/api/calls", calls],
      ["get", "/admin/api/keys", await get("/keys")],
      ["post", "/admin/api/keys", createdAnswer],
      ["get", "/admin/api/route-traces/{id}", await get(`/route-traces/${servedCall.routeId}`)],
      ["get", "/admin/api/route-traces/{id}", await get(`/route-traces/${refusedCall.routeId}`)],
      ["post", "/admin/api/dry-run", await get("/dry-run", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ request: { model: "chat/gpt-test", messages: [{ role: "user", content: "hi" }] } }) })],
    ];
    /** Paths of answered fields that an object schema with listed properties does not name (records, `additionalProperties`, are open). */
    const undocumented = (schema: any, value: unknown, at: string, out: Set<string>): void => {
      if (!schema || value === null || typeof value !== "object") return;
      if (schema.anyOf) {
        // the alternative that names the most of the value's fields
        const fits = schema.anyOf.map((alt: any) => { const o = new Set<string>(); undocumented(alt, value, at, o); return o; });
        const best = fits.reduce((a: Set<string>, b: Set<string>) => (b.size < a.size ? b : a));
        for (const p of best) out.add(p);
        return;
      }
      if (Array.isArray(value)) {
        for (const item of value) undocumented(schema.items, item, `${at}[]`, out);
        return;
      }
      const props = schema.properties as Record<string, unknown> | undefined;
      for (const [k, v] of Object.entries(value)) {
        if (props && Object.keys(props).length > 0 && !(k in props)) out.add(`${at}.${k}`);
        else if (props?.[k]) undocumented(props[k], v, `${at}.${k}`, out);
        else if (typeof schema.additionalProperties === "object") undocumented(schema.additionalProperties, v, `${at}.${k}`, out);
      }
    };
    for (const [method, path, answer] of answers) {
      const responses = (op(method, path) as any).responses;
      const schema = (responses["200"] ?? responses["201"]).content["application/json"].schema;
      const missing = new Set<string>();
      undocumented(schema, answer, "$", missing);
      expect({ route: `${method} ${path}`, undocumented: [...missing].sort() }).toEqual({ route: `${method} ${path}`, undocumented: [] });
    }
    // the fields README names are there, with the route trace's refusal and token-saver outcome
    const usageRow = (doc.paths["/admin/api/usage"].get as any).responses["200"].content["application/json"].schema.properties.rows.items.properties;
    for (const f of ["costUsd", "unpriced", "savedChars", "savedTokens", "budgets"]) expect(Object.keys(usageRow)).toContain(f);
    const trace = (doc.paths["/admin/api/route-traces/{id}"].get as any).responses["200"].content["application/json"].schema.properties;
    for (const f of ["tokenSaver", "error", "redactions", "restored"]) expect(Object.keys(trace)).toContain(f);
  });

  test("the bodies an automation builds are described, not left as any: key limits, combo targets, the settings blocks (newuser15 N4)", () => {
    const body = (method: string, path: string) => op(method, path)!.requestBody!.content["application/json"]!.schema;
    const limits = body("post", "/admin/api/keys").properties.limits;
    expect(Object.keys(limits.properties).sort()).toEqual(["budgets", "concurrency", "models", "rpm", "tpm"]);
    expect(limits.additionalProperties).toBe(false);
    expect(limits.properties.budgets.items.properties.window.enum).toEqual(["5h", "1d", "7d", "30d"]);
    expect(Object.keys(limits.properties.budgets.items.properties).sort()).toEqual(["tokens", "usd", "window"]);
    for (const [method, path] of [["post", "/admin/api/combos"], ["put", "/admin/api/combos/{name}"]] as const) {
      const target = body(method, path).properties.targets.items;
      expect(target.required).toEqual(["model"]);
      expect(Object.keys(target.properties).sort()).toEqual(["account", "model", "params", "weight", "when"]);
      expect(target.properties.params.type).toBe("object");
      expect(target.properties.when.required).toEqual(["expr"]);
    }
    const settings = op("get", "/admin/api/settings")!.responses!["200"].content["application/json"].schema.properties.settings.properties;
    const object = (s: any) => (s.anyOf ? s.anyOf.find((x: any) => x.type === "object") : s);
    expect(Object.keys(object(settings.flight_recorder).properties).sort()).toEqual(["enabled", "max_body_bytes", "max_requests"]);
    expect(object(settings.alerts).properties).toHaveProperty("webhook");
    expect(object(settings.redaction).properties).toHaveProperty("enabled");
    expect(settings.pricing.additionalProperties.required).toEqual(["input", "output"]);
    // the members accounts and discovery answer with
    const account = op("get", "/admin/api/accounts")!.responses!["200"].content["application/json"].schema.properties.accounts.items;
    expect(Object.keys(account.properties.quarantine.properties).sort()).toEqual(["advice", "reason"]);
    const found = op("post", "/admin/api/discovery")!.responses!["200"].content["application/json"].schema.properties.results.items;
    expect(Object.keys(found.properties).sort()).toEqual(["accountId", "error", "models", "ok", "providerId"]);
  });

  test("every $ref in the document points at something in it", () => {
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) (k === "$ref" && typeof x === "string" ? refs.push(x) : walk(x));
      }
    };
    walk(doc);
    const resolves = (ref: string) => ref.startsWith("#/") && ref.slice(2).split("/").reduce<any>((at, part) => at?.[part.replaceAll("~1", "/").replaceAll("~0", "~")], doc) !== undefined;
    expect(refs.filter((r) => !resolves(r))).toEqual([]);
  });

  test("the live routes validate as before: a bad body is still a 400 in OpenAI error shape", async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${gw.url}/admin/api${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const dry = await post("/dry-run", { format: "nope" });
    expect(dry.status).toBe(400);
    const dryErr = (await dry.json()) as { error: { message: string; type: string } };
    expect(dryErr.error.type).toBe("invalid_request_error");
    expect(dryErr.error.message).toContain("request");
    const acct = await post("/accounts", { provider: "cc" });
    expect(acct.status).toBe(400);
    expect(((await acct.json()) as { error: { message: string } }).error.message).toContain("credential");
    // A valid dry run still works.
    const ok = await post("/dry-run", { request: { model: "anth/claude-test", max_tokens: 5, messages: [{ role: "user", content: "hi" }] } });
    expect(ok.status).toBe(200);
  });

  test("the document sits behind the admin guard", async () => {
    const remote = await fetch(`${gw.url}/admin/api/openapi.json`, { headers: { "x-forwarded-for": "203.0.113.7" } });
    expect(remote.status).toBe(401);
    // RFC 7239's header alone (a proxy that sends only it) ends the loopback exemption too.
    const forwarded = await fetch(`${gw.url}/admin/api/openapi.json`, { headers: { forwarded: "for=203.0.113.7;proto=https" } });
    expect(forwarded.status).toBe(401);
    const withToken = await fetch(`${gw.url}/admin/api/openapi.json`, { headers: { "x-forwarded-for": "203.0.113.7", authorization: `Bearer ${gw.app.adminToken}` } });
    expect(withToken.status).toBe(200);
  });
});

describe("the document is built once per set of routes", () => {
  test("three requests build it once; a route added to the app rebuilds it, listing that route", () => {
    let builds = 0;
    const build = (a: Parameters<typeof adminOpenApiDocument>[0]) => (builds++, adminOpenApiDocument(a));
    const app = new Elysia({ prefix: "/admin/api" }).get("/keys", () => []);
    const first = adminOpenApiJson(app as never, build);
    expect(adminOpenApiJson(app as never, build)).toBe(first);
    expect(adminOpenApiJson(app as never, build)).toBe(first);
    expect(builds).toBe(1);
    expect(Object.keys(JSON.parse(first).paths)).toEqual(["/admin/api/keys"]);
    app.get("/quota", () => ({}));
    const second = JSON.parse(adminOpenApiJson(app as never, build));
    expect(builds).toBe(2);
    expect(Object.keys(second.paths).sort()).toEqual(["/admin/api/keys", "/admin/api/quota"]);
    // Another app has its own document.
    expect(Object.keys(JSON.parse(adminOpenApiJson(new Elysia({ prefix: "/admin/api" }).get("/usage", () => ({})) as never, build)).paths)).toEqual(["/admin/api/usage"]);
  });

  test("a config reload that adds a combo serves the same document (it reads no configuration)", async () => {
    const before = await (await fetch(`${gw.url}/admin/api/openapi.json`)).text();
    const yaml = readFileSync(gw.configPath, "utf8");
    try {
      writeFileSync(gw.configPath, `${yaml}\ncombos:\n  - name: reload-combo\n    targets:\n      - model: oai/gpt-test\n`);
      const r = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST" });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { changed: Record<string, unknown> }).changed).toHaveProperty("combos");
      const after = await fetch(`${gw.url}/admin/api/openapi.json`);
      expect(after.status).toBe(200);
      expect(after.headers.get("content-type")).toBe("application/json;charset=utf-8");
      expect(await after.text()).toBe(before);
    } finally {
      writeFileSync(gw.configPath, yaml);
      await (await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST" })).text();
    }
  });
});
