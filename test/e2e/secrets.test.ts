/**
 * Secrets never leak (SPEC 2.4, O-2, O-4, D-1): the upstream key and the client keys must not appear in
 * the gateway's log lines (stdout and stderr of a real `switchyard start`), in any file of its data
 * directory (the SQLite files' raw bytes), in route traces, or in anything sent to the client (bodies
 * and headers) — including error paths where the upstream echoes the key back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { startFakeUpstream, simpleReply, type FakeFormat, type FakeReply, type FakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";

const UPSTREAM_KEY = "upk_7Qm2Vx9KpLr4Tz8WcN3bHs6D";
const CLIENT_KEY = "cl-laptop-Yp4Nw8Rt2Kq6Mz9Xv3Lb7Hd5";
const SECRET_PARTS = (s: string) => [s, s.slice(-16)];

const SCENARIOS = ["ok", "e400", "e500", "inband", "e401"] as const;
const KINDS = [
  ["anth", "anthropic", ""],
  ["oai", "openai", "/v1"],
  ["resp", "openai-responses", "/v1"],
  ["gem", "gemini", ""],
  ["anthx", "anthropic", ""],
] as const;

/** One provider and account per (format, scenario), so one scenario's cooldowns do not mask the next. */
const YAML = (fake: string) => `
server:
  require_api_key: true
providers:
${KINDS.flatMap(([id, kind, suffix]) => SCENARIOS.map((sc) => `  - { id: ${id}-${sc}, kind: ${kind}, base_url: "${fake}${suffix}" }`)).join("\n")}
accounts:
${KINDS.flatMap(([id]) => SCENARIOS.map((sc) => `  - { id: ${id}-${sc}-1, provider: ${id}-${sc}, api_key: "env:UPSTREAM_KEY" }`)).join("\n")}
keys:
  - name: laptop
    key: env:CLIENT_KEY
`;

/** The credential the fake received, whatever header carried it. */
const keyOf = (r: ReceivedRequest) => r.headers["x-api-key"] ?? r.headers["x-goog-api-key"] ?? (r.headers.authorization ?? "").replace(/^Bearer /, "");

/** An error body in the provider's own format whose message echoes `text`. */
function echoError(format: FakeFormat | undefined, status: number, text: string) {
  switch (format) {
    case "anthropic-messages":
      return { type: "error", error: { type: status === 401 ? "authentication_error" : "invalid_request_error", message: text } };
    case "gemini":
      return { error: { code: status, message: text, status: status === 401 ? "UNAUTHENTICATED" : "INVALID_ARGUMENT" } };
    default:
      return { error: { message: text, type: status === 401 ? "invalid_request_error" : "invalid_request_error", param: null, code: status === 401 ? "invalid_api_key" : null } };
  }
}

let fake: FakeUpstream;
let inst: Instance;
let dbKey: string;
/** Every response the client got: status, headers and body text. */
const seen: Array<{ what: string; status: number; headers: string; body: string; routeId: string | null }> = [];

beforeAll(async () => {
  fake = await startFakeUpstream();
  fake.handle((req): FakeReply | undefined => {
    const key = keyOf(req);
    const model = req.model ?? "";
    if (model.startsWith("e401")) return { status: 401, json: echoError(req.format, 401, `Incorrect API key provided: ${key}. Authorization: Bearer ${key}`) };
    if (model.startsWith("e400")) return { status: 400, json: echoError(req.format, 400, `Bad request for key ${key} (header x-api-key: ${key})`) };
    if (model.startsWith("e500")) return { status: 500, headers: { "content-type": "text/plain" }, text: `upstream crashed while serving ${key}` };
    if (model.startsWith("inband") && req.format === "anthropic-messages") {
      return { sse: `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: `key ${key} is not allowed` } })}\n\n` };
    }
    if (req.path.endsWith("/count_tokens")) return { status: 401, json: echoError("anthropic-messages", 401, `invalid x-api-key ${key}`) };
    if (!req.format) return undefined;
    // A normal reply whose headers echo the key (they must not be forwarded to the client).
    return { ...simpleReply(req.format, { text: "fine", model }, req.stream), headers: { "x-echo-key": key, "request-id": `req-${key}` } };
  });
  inst = await startInstance({ yaml: YAML(fake.url), env: { UPSTREAM_KEY, CLIENT_KEY } });
  // A key created through the admin API (the CLI's way), used for part of the traffic.
  const admin = inst.instance().adminToken;
  const created = await fetch(`${inst.url}/admin/api/keys`, { method: "POST", headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" }, body: JSON.stringify({ name: "ci" }) });
  expect(created.status).toBe(201);
  dbKey = ((await created.json()) as { secret: string }).secret;
  expect(dbKey.length).toBeGreaterThan(20);
});

afterAll(async () => {
  await stopInstance(inst);
  await fake?.stop();
  if (inst) rmSync(inst.dataDir, { recursive: true, force: true });
});

const secrets = () => [UPSTREAM_KEY, CLIENT_KEY, dbKey];

function assertClean(where: string, text: string) {
  for (const s of secrets()) for (const part of SECRET_PARTS(s)) expect([where, text.includes(part)]).toEqual([where, false]);
}

async function call(what: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${inst.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  const h: string[] = [];
  res.headers.forEach((v, k) => h.push(`${k}: ${v}`));
  seen.push({ what, status: res.status, headers: h.join("\n"), body: text, routeId: res.headers.get("x-switchyard-route-id") });
  return { status: res.status, text };
}

const REQUESTS: Array<[string, string, (scenario: string, stream: boolean) => unknown]> = [
  ["anth", "/v1/messages", (sc, stream) => ({ model: `anth-${sc}/${sc}-model`, max_tokens: 20, stream, messages: [{ role: "user", content: "hi" }] })],
  ["oai", "/v1/chat/completions", (sc, stream) => ({ model: `oai-${sc}/${sc}-model`, stream, messages: [{ role: "user", content: "hi" }] })],
  ["resp", "/v1/responses", (sc, stream) => ({ model: `resp-${sc}/${sc}-model`, stream, input: "hi" })],
  ["gem", "/v1/chat/completions", (sc, stream) => ({ model: `gem-${sc}/${sc}-model`, stream, messages: [{ role: "user", content: "hi" }] })],
  ["anth-from-chat", "/v1/chat/completions", (sc, stream) => ({ model: `anthx-${sc}/${sc}-model`, stream, messages: [{ role: "user", content: "hi" }] })],
];

describe("traffic, successful and failing", () => {
  test("successful requests (each format, streamed and not, both client keys)", async () => {
    for (const [name, path, body] of REQUESTS) {
      for (const stream of [false, true]) {
        const r = await call(`${name} ok stream=${stream}`, path, body("ok", stream), { authorization: `Bearer ${stream ? CLIENT_KEY : dbKey}` });
        expect([name, r.status]).toEqual([name, 200]);
        expect(r.text).toContain("fine");
      }
    }
  });

  test("upstream errors that echo the key: 400, 500 (plain text), an in-band error event, 401", async () => {
    for (const model of ["e400", "e500", "inband", "e401"]) {
      for (const [name, path, body] of REQUESTS) {
        const before = fake.requests.length;
        const r = await call(`${name} ${model}`, path, body(model, false), { "x-api-key": CLIENT_KEY });
        expect([name, model, r.status >= 400]).toEqual([name, model, model === "inband" && !name.startsWith("anth") ? false : true]);
        expect(fake.requests.length).toBeGreaterThan(before);
      }
    }
    // The upstream really did echo the key: the test would prove nothing otherwise.
    expect(fake.requests.some((r) => keyOf(r) === UPSTREAM_KEY)).toBe(true);
  });

  test("count_tokens where the upstream's 401 echoes the key", async () => {
    const r = await call("count_tokens", "/v1/messages/count_tokens", { model: "anth-ok/ok-model", messages: [{ role: "user", content: "hi" }] }, { "x-api-key": CLIENT_KEY });
    expect(r.status).toBe(200);
  });

  test("client-side failures: a wrong key, a key in the wrong place, a forwarded caller", async () => {
    expect((await call("wrong key", "/v1/messages", { model: "anth-ok/ok", max_tokens: 5, messages: [] }, { "x-api-key": `${CLIENT_KEY}x` })).status).toBe(401);
    expect((await call("basic auth", "/v1/chat/completions", { model: "oai-ok/ok", messages: [] }, { authorization: `Basic ${CLIENT_KEY}` })).status).toBe(401);
    expect((await call("forwarded", "/v1/responses", { model: "oai-ok/ok", input: "x" }, { "x-forwarded-for": "203.0.113.1", authorization: `Bearer ${dbKey.slice(0, -1)}` })).status).toBe(401);
  });
});

describe("nothing leaked", () => {
  test("the placeholder keys README and setup give clients are no secret: the gateway's own words stay in its answers", async () => {
    // A CLI set up without a key sends "switchyard": scrubbed as a presented key, every "switchyard" of the answer read "[redacted]"
    for (const [placeholder, headers] of [
      ["switchyard", { authorization: "Bearer switchyard" }],
      ["switchyard", { "x-goog-api-key": "switchyard" }],
      ["placeholder", { "x-api-key": "placeholder" }],
    ] as const) {
      const r = await call(`placeholder ${placeholder}`, "/v1/chat/completions", { model: "oai-ok/ok-model", messages: [{ role: "user", content: "hi" }] }, headers);
      expect(r.status).toBe(401);
      expect(r.text).toContain("switchyard keys create NAME makes one");
      expect(r.text).not.toContain("[redacted]");
    }
    // a key that is not a placeholder is still scrubbed from its own echo
    const r = await call("unknown key", "/v1/chat/completions", { model: "oai-ok/ok-model", messages: [{ role: "user", content: "hi" }] }, { authorization: "Bearer not-a-placeholder-but-unknown" });
    expect(r.status).toBe(401);
  });

  test("the client never sees a key, in bodies or headers", () => {
    expect(seen.length).toBeGreaterThan(30);
    for (const s of seen) {
      assertClean(`${s.what}: body`, s.body);
      assertClean(`${s.what}: headers`, s.headers);
      expect(s.headers).not.toContain("x-echo-key");
    }
    // The 401 echo reached the client only as scrubbed text.
    const echoed = seen.find((s) => s.what === "anth e401")!;
    expect(echoed.body).toContain("[redacted]");
  });

  test("route traces (admin API) hold no key", async () => {
    const admin = inst.instance().adminToken;
    let n = 0;
    for (const s of seen) {
      if (!s.routeId) continue;
      const res = await fetch(`${inst.url}/admin/api/route-traces/${s.routeId}`, { headers: { authorization: `Bearer ${admin}` } });
      expect(res.status).toBe(200);
      assertClean(`trace of ${s.what}`, await res.text());
      n++;
    }
    expect(n).toBeGreaterThan(30);
    const calls = await fetch(`${inst.url}/admin/api/calls?limit=1000`, { headers: { authorization: `Bearer ${admin}` } });
    assertClean("calls list", await calls.text());
    const keys = await fetch(`${inst.url}/admin/api/keys`, { headers: { authorization: `Bearer ${admin}` } });
    assertClean("keys list", await keys.text());
  });

  test("log lines (stdout and stderr) hold no key, while running and after a graceful stop", async () => {
    expect(inst.stdout.length).toBeGreaterThan(30);
    assertClean("stdout", inst.stdout.join("\n"));
    assertClean("stderr", inst.stderr.join("\n"));
    // Flushed and closed, every file of the data directory, byte for byte.
    const files = () =>
      (readdirSync(inst.dataDir, { recursive: true }) as string[]).filter((f) => f !== "config.yaml" && statSync(join(inst.dataDir, f)).isFile());
    const dump = () => files().map((f) => [f, Buffer.from(readFileSync(join(inst.dataDir, f))).toString("latin1")] as const);
    // Usage batches are flushed at least every second (D-1): wait until the requests' rows are in a data file.
    for (const end = Date.now() + 15_000; !dump().some(([, bytes]) => bytes.includes("ok-model")); await Bun.sleep(50)) {
      if (Date.now() > end) throw new Error("the usage rows never reached the data directory");
    }
    for (const [f, bytes] of dump()) assertClean(`data file ${f} (running)`, bytes);
    await stopInstance(inst);
    expect(await inst.exited).toBe(0);
    expect(files()).toContain("switchyard.db");
    expect(files()).not.toContain("instance.json");
    for (const [f, bytes] of dump()) assertClean(`data file ${f} (stopped)`, bytes);
    // The usage rows are really there (the check above read real data, not an empty file).
    const db = dump().find(([f]) => f === "switchyard.db")![1];
    expect(db).toContain("ok-model");
    assertClean("stdout after stop", inst.stdout.join("\n"));
    assertClean("stderr after stop", inst.stderr.join("\n"));
  });
});
