/**
 * Admin API input validation (SPEC 2.6, 9.3) fuzzed through a real gateway: every route and method the
 * OpenAPI document lists (so a route added later is fuzzed without touching this file) gets malformed
 * JSON, `[]`, `null`, `{}`, scalars, wrong-typed fields, huge strings, odd path parameters and odd
 * queries. Nothing may answer 5xx; every error is the JSON `{error: {message, type, param}}`; a body
 * that is not a JSON object, or a field of the wrong JSON type, on a route that takes a body is a 4xx;
 * every error status a route answered is listed for its operation in the document; and the gateway
 * still serves afterwards. The run is seeded (SWITCHYARD_FUZZ_SEED to replay one; the
 * seed is in every failure message).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { seededRng } from "../../pipeline/order.ts";

const SEED = Number(process.env.SWITCHYARD_FUZZ_SEED ?? 19_2026);
const RANDOM_CASES_PER_ROUTE = 24;

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] };
type Operation = { parameters?: Array<{ name: string; in: string }>; requestBody?: { content: Record<string, { schema: JsonSchema }> } };
type Route = { method: string; path: string; op: Operation & { responses?: Record<string, unknown> } };

const HUGE = "x".repeat(300_000);
const PATH_VALUES = ["x", "%25", "%2525", "%25E0%25A4%25A", "%00", "..%2F..%2Fetc%2Fpasswd", "%E0%A4%A", "%", "a%20b", "%F0%9F%98%80", "-", "_".repeat(600), "null", "0", "'%22%3Cscript%3E", "%2F"];
const QUERY_VALUES = ["", "abc", "-1", "0", "99999999999999999999", "1e3", "24h", "%00", "%E0%A4%A", "model", "true", "[]", "x".repeat(5000)];
const ODD_VALUES: unknown[] = [42, -1, 0.5, 1e308, "", "str", true, false, null, [], {}, [1, "a", null], { nested: { deeper: [{}] } }, HUGE, "\u0000\ud800"];

/** The JSON type of a value as JSON Schema names it. */
function jsonType(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "array";
  if (typeof x === "number") return Number.isInteger(x) ? "integer" : "number";
  return typeof x;
}

/** Whether a value's JSON type is one the schema cannot accept (only for plain `type` schemas). */
function wrongType(schema: JsonSchema | undefined, x: unknown): boolean {
  if (!schema || schema.type === undefined || schema.anyOf || schema.oneOf) return false;
  const allowed = Array.isArray(schema.type) ? schema.type : [schema.type];
  const t = jsonType(x);
  if (allowed.includes(t)) return false;
  if (t === "integer" && allowed.includes("number")) return false;
  return true;
}

let gw: TestGateway;
let routes: Route[];
const seen: Array<{ label: string; status: number; route?: Route }> = [];

beforeAll(async () => {
  gw = await startGateway();
  const doc = (await (await fetch(`${gw.url}/admin/api/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
  routes = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));
});
afterAll(async () => {
  await gw?.stop();
});

/**
 * Sends one request and checks the invariants every answer keeps: never 5xx; an error is JSON with a
 * string message. Returns the status. The body of a 2xx stream (events) is cancelled unread.
 */
async function probe(label: string, method: string, path: string, body?: string, contentType = "application/json", route?: Route): Promise<number> {
  const init: RequestInit = { method, headers: body === undefined ? {} : { "content-type": contentType } };
  if (body !== undefined && method !== "GET" && method !== "HEAD") init.body = body;
  const res = await fetch(`${gw.url}${path}`, { ...init, signal: AbortSignal.timeout(15_000) });
  const where = `${label} (seed ${SEED}): ${method} ${path.slice(0, 120)} → ${res.status}`;
  seen.push({ label: where, status: res.status, route });
  if (res.status >= 400) {
    const text = await res.text();
    expect(res.headers.get("content-type") ?? "", where).toContain("application/json");
    let parsed: any;
    expect(() => (parsed = JSON.parse(text)), `${where}: ${text.slice(0, 200)}`).not.toThrow();
    expect(typeof parsed?.error?.message, `${where}: ${text.slice(0, 200)}`).toBe("string");
    expect(typeof parsed?.error?.type, where).toBe("string");
    expect("param" in parsed.error, where).toBe(true);
  } else {
    await res.body?.cancel();
  }
  expect(res.status, `${where}`).toBeLessThan(500);
  return res.status;
}

/** The route's path with each `{param}` replaced. */
const fill = (path: string, value: () => string) => path.replace(/\{[^}]+\}/g, () => value());

describe("admin API fuzz (every route from the OpenAPI document)", () => {
  test("the document lists the admin routes the fuzz walks", () => {
    expect(routes.length).toBeGreaterThan(10);
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const r of ["POST /admin/api/keys", "POST /admin/api/dry-run", "POST /admin/api/accounts", "GET /admin/api/usage"]) expect(names).toContain(r);
  });

  test("fixed malformed bodies: a route that takes a body answers 4xx; nothing answers 5xx", async () => {
    const bodies: Array<[string, string, string?]> = [
      ["malformed JSON", "{"],
      ["truncated JSON", '{"name": "x", "scopes": ['],
      ["not JSON", "name=x&scopes=admin", "application/x-www-form-urlencoded"],
      ["text/plain JSON array", "[]", "text/plain"],
      ["array", "[]"],
      ["null", "null"],
      ["number", "42"],
      ["string", '"x"'],
      ["true", "true"],
      ["deep nesting", "[".repeat(20_000) + "]".repeat(20_000)],
      ["huge string", JSON.stringify(HUGE)],
      ["invalid UTF-8 escapes", '{"name": "\\ud800\\u0000"}'],
    ];
    for (const route of routes) {
      const takesBody = route.op.requestBody !== undefined;
      const path = fill(route.path, () => "fuzz-target");
      // A GET carries no body (probe leaves it out): its requests differ only by their content type.
      const sentTypes = new Set<string>();
      for (const [label, body, type] of bodies) {
        if (route.method === "GET") {
          if (sentTypes.has(type ?? "application/json")) continue;
          sentTypes.add(type ?? "application/json");
        }
        const status = await probe(label, route.method, path, body, type, route);
        if (takesBody && route.method !== "GET" && label !== "invalid UTF-8 escapes") {
          expect(status, `${label} (seed ${SEED}): ${route.method} ${path} must be refused`).toBeGreaterThanOrEqual(400);
        }
      }
      // `{}` and an empty body may be valid (every field optional); never a 5xx.
      await probe("empty object", route.method, path, "{}", undefined, route);
      await probe("empty body", route.method, path, "", undefined, route);
    }
  });

  test("every odd path parameter on every route that has one: never a 5xx", async () => {
    for (const route of routes.filter((r) => r.path.includes("{"))) {
      for (const value of PATH_VALUES) await probe(`path parameter ${value.slice(0, 20)}`, route.method, fill(route.path, () => value), "{}", undefined, route);
    }
  });

  test("seeded random bodies, fields, path parameters and queries", async () => {
    const rnd = seededRng(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    for (const route of routes) {
      const schema = route.op.requestBody?.content["application/json"]?.schema;
      const props = Object.entries(schema?.properties ?? {});
      const queryNames = (route.op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      for (let i = 0; i < RANDOM_CASES_PER_ROUTE; i++) {
        const path = fill(route.path, () => pick(PATH_VALUES));
        const names = [...queryNames, "since", "by", "limit", "types", "x"];
        const query = names.filter(() => rnd() < 0.5).map((n) => `${n}=${pick(QUERY_VALUES)}`).join("&");
        const url = query ? `${path}?${query}` : path;
        if (props.length === 0 || route.method === "GET") {
          await probe("random query/path", route.method, url, rnd() < 0.5 ? JSON.stringify(pick(ODD_VALUES)) : undefined, undefined, route);
          continue;
        }
        // A body with each field either absent, plausible, or an odd value; plus a stray field now and then.
        const body: Record<string, unknown> = {};
        let mistyped = false;
        for (const [name, s] of props) {
          const r = rnd();
          if (r < 0.3) continue;
          const value = r < 0.45 ? "fuzz" : pick(ODD_VALUES);
          body[name] = value;
          if (wrongType(s, value)) mistyped = true;
        }
        if (rnd() < 0.2) body[`stray_${Math.floor(rnd() * 100)}`] = pick(ODD_VALUES);
        const status = await probe(`random body ${JSON.stringify(body).slice(0, 80)}`, route.method, url, JSON.stringify(body), undefined, route);
        if (mistyped) expect(status, `mistyped body (seed ${SEED}) on ${route.method} ${url}: ${JSON.stringify(body).slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      }
    }
  });

  test("a body over the admin limit is a 413; a wrong-typed field is a 400 naming its path", async () => {
    expect(await probe("2 MiB body", "POST", "/admin/api/keys", JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }))).toBe(413);
    const res = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ok", scopes: ["admin", 7] }) });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as any).error;
    expect(err.param).toBe("scopes[1]");
    expect(err.message).toStartWith("scopes[1]: ");
    expect(err.type).toBe("invalid_request_error");
  });

  test("every error status a route answered is one its operation in the document lists (the document lists them one by one)", () => {
    const missing = new Set<string>();
    let checked = 0;
    for (const s of seen) {
      if (!s.route || s.status < 400) continue;
      checked++;
      if (s.route.op.responses?.[String(s.status)] === undefined) missing.add(`${s.route.method} ${s.route.path} answered ${s.status}, not listed`);
    }
    expect(checked).toBeGreaterThan(routes.length * 5);
    expect([...missing]).toEqual([]);
  });

  test("the process is healthy afterwards: /health, a completion and the admin API answer", async () => {
    expect(seen.length).toBeGreaterThan(routes.length * 10);
    expect(seen.filter((s) => s.status >= 500)).toEqual([]);
    const health = await fetch(`${gw.url}/health`);
    expect(health.status).toBe(200);
    const chat = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }) });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as any).choices[0].message.content).toBeString();
    const keys = await fetch(`${gw.url}/admin/api/keys`);
    expect(keys.status).toBe(200);
    expect(gw.logs.filter((l) => l.includes('"http error"'))).toEqual([]);
  });
});
