/**
 * Bad input through the real gateway (SPEC G-4, R-2, 2.1): every malformed request gets the right
 * status and a JSON error body in the client's own format — never a 500, never an HTML page — and the
 * process keeps serving afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

const LIMIT = 64 * 1024;
const YAML = `
server:
  max_body_bytes: ${LIMIT}
${fakeProviders([["anth", "anthropic"], ["oai", "openai"], ["gem", "gemini"]])}aliases:
  fast: oai/gpt-test
combos:
  - name: coding
    targets:
      - model: anth/claude-test
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

type Shape = "anthropic" | "openai";
const ENDPOINTS: Array<{ path: string; shape: Shape; ok: Record<string, unknown> }> = [
  { path: "/v1/messages", shape: "anthropic", ok: { model: "anth/claude-test", max_tokens: 20, messages: [{ role: "user", content: "hi" }] } },
  { path: "/v1/chat/completions", shape: "openai", ok: { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] } },
  { path: "/v1/responses", shape: "openai", ok: { model: "oai/gpt-test", input: "hi" } },
];

const send = (path: string, body: string | Uint8Array | null, headers: Record<string, string> = {}, method = "POST") =>
  fetch(`${gw.url}${path}`, { method, body, headers: { "content-type": "application/json", ...headers } });

/** Asserts a JSON error in `shape` with `status`, and returns the parsed body. */
async function expectError(res: Response, status: number, shape: Shape, type?: string): Promise<any> {
  const text = await res.text();
  expect([res.status, text.slice(0, 200)]).toEqual([status, expect.any(String)]);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(text).not.toMatch(/<html|<!doctype|\bat .*\.ts:\d+/i);
  const body = JSON.parse(text);
  // Plain comparisons: Bun's asymmetric matchers inside toMatchObject can rewrite the received object.
  if (shape === "anthropic") {
    expect(Object.keys(body).sort()).toEqual(["error", "type"]);
    expect(body.type).toBe("error");
    expect(Object.keys(body.error).sort()).toEqual(["message", "type"]);
  } else {
    expect(Object.keys(body)).toEqual(["error"]);
  }
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(typeof body.error.type).toBe("string");
  if (type) expect(body.error.type).toBe(type);
  return body;
}

const deepArray = (n: number) => "[".repeat(n) + "]".repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

describe.each(ENDPOINTS)("$path", ({ path, shape, ok }) => {
  test("malformed JSON → 400", async () => {
    for (const body of ['{"model": "x",', "{nope}", "", "   "]) {
      const b = await expectError(await send(path, body), 400, shape, "invalid_request_error");
      expect(JSON.stringify(b)).toContain("JSON");
    }
  });

  test("a missing or empty model → 400 naming the field", async () => {
    const { model: _m, ...noModel } = ok;
    const b = await expectError(await send(path, JSON.stringify(noModel)), 400, shape, "invalid_request_error");
    expect(JSON.stringify(b)).toContain("model");
    await expectError(await send(path, JSON.stringify({ ...ok, model: "" })), 400, shape, "invalid_request_error");
    await expectError(await send(path, JSON.stringify({ ...ok, model: 42 })), 400, shape, "invalid_request_error");
  });

  test("an unknown provider prefix → 404 in the client's format, nothing sent upstream", async () => {
    const before = gw.fake.requests.length;
    const b = await expectError(await send(path, JSON.stringify({ ...ok, model: "nosuch/model-x" })), 404, shape, shape === "anthropic" ? "not_found_error" : "invalid_request_error");
    if (shape === "openai") expect(b.error.code).toBe("model_not_found");
    expect(gw.fake.requests.length).toBe(before);
  });

  test("a body over the limit → 413 request_too_large, declared or streamed, small or far over", async () => {
    const over = JSON.stringify({ ...ok, pad: "x".repeat(LIMIT) });
    const b = await expectError(await send(path, over), 413, shape, shape === "anthropic" ? "request_too_large" : undefined);
    if (shape === "openai") expect(b.error.code).toBe("request_too_large");
    // Far over (well past any transport backstop): still the client's format.
    await expectError(await send(path, "x".repeat(4 * 1024 * 1024)), 413, shape);
    // Chunked, no Content-Length: cut off at the limit.
    const chunk = new TextEncoder().encode("y".repeat(256 * 1024));
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulls++ < 16) c.enqueue(chunk);
        else c.close();
      },
    });
    await expectError(await fetch(`${gw.url}${path}`, { method: "POST", body: stream, duplex: "half" } as RequestInit), 413, shape);
  });

  test("a refusal carries SPEC 2.4's reply headers: X-Request-Id, X-Switchyard-Route-Id and X-Switchyard-Cache: miss", async () => {
    const refusals = [
      await send(path, "{nope}"),
      await send(path, JSON.stringify({ ...ok, model: "nosuch/model-x" })),
      await send(path, JSON.stringify({ ...ok, pad: "x".repeat(LIMIT) })),
      await send(path, JSON.stringify(ok), { "x-forwarded-for": "203.0.113.9" }),
    ];
    const seen = await Promise.all(
      refusals.map(async (r) => {
        await r.arrayBuffer();
        return [r.status, /^req_/.test(r.headers.get("x-request-id") ?? ""), /^sy_/.test(r.headers.get("x-switchyard-route-id") ?? ""), r.headers.get("x-switchyard-cache")];
      }),
    );
    expect(seen).toEqual([
      [400, true, true, "miss"],
      [404, true, true, "miss"],
      [413, true, true, "miss"],
      [401, true, true, "miss"],
    ]);
  });

  test("invalid UTF-8 → 400", async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"model":"anth/x","x":"'), 0xc3, 0x28, 0xff, ...new TextEncoder().encode('"}')]);
    const b = await expectError(await send(path, bytes), 400, shape, "invalid_request_error");
    expect(JSON.stringify(b)).toContain("UTF-8");
  });

  test("a body compressed with a coding the gateway does not decode (compress, lz4) → 415 that says so, not a UTF-8 or JSON complaint", async () => {
    // gzip, deflate, br and zstd are decoded (test/http/compressed-bodies.test.ts).
    const json = new TextEncoder().encode(JSON.stringify(ok));
    for (const [encoding, bytes] of [
      ["compress", Bun.gzipSync(json)],
      ["lz4", Bun.zstdCompressSync(json)],
    ] as const) {
      const before = gw.fake.requests.length;
      const b = await expectError(await send(path, bytes, { "content-encoding": encoding }), 415, shape, "invalid_request_error");
      expect(b.error.message).toContain(`compressed with ${encoding} (Content-Encoding)`);
      expect(gw.fake.requests.length).toBe(before);
    }
  });

  test("a body that is an array, a string, a number or null → 400", async () => {
    for (const body of [JSON.stringify([ok]), '"hello"', "42", "null", "true"]) {
      await expectError(await send(path, body), 400, shape, "invalid_request_error");
    }
  });

  test("JSON nested 30,000 deep (a 60 KB body; JSON.stringify of it takes ~0.5 s) → 400 that names the depth limit, for every upstream", async () => {
    const body = JSON.stringify(ok).replace(/}$/, `,"metadata":${deepArray(30_000)}}`);
    for (const model of [ok.model, "gem/gemini-test", "anth/claude-test"]) {
      const b = await expectError(await send(path, body.replace(JSON.stringify(ok.model), JSON.stringify(model))), 400, shape, "invalid_request_error");
      expect(JSON.stringify(b)).toContain("more than 1000 levels deep");
    }
  });

  test("JSON nested 10,000 deep → a 4xx or a normal reply, never a 500", async () => {
    await expectError(await send(path, deepArray(10_000)), 400, shape, "invalid_request_error");
    await expectError(await send(path, deepObject(10_000)), 400, shape, "invalid_request_error");
    const nested = [
      { ...ok, metadata: JSON.parse(deepObject(2000)) },
      { ...ok, tools: [{ type: "function", name: "deep", parameters: JSON.parse(deepObject(2000)), input_schema: JSON.parse(deepObject(2000)), function: { name: "deep", parameters: JSON.parse(deepObject(2000)) } }] },
    ];
    // Built as text so the depth is really 10,000 (JSON.stringify would hit the test's own stack).
    const raw = [
      JSON.stringify(ok).replace(/}$/, `,"metadata":${deepObject(10_000)}}`),
      JSON.stringify(ok).replace(/}$/, `,"tools":[{"type":"function","name":"d","parameters":${deepObject(10_000)},"input_schema":${deepObject(10_000)},"function":{"name":"d","parameters":${deepObject(10_000)}}}]}`),
      JSON.stringify(ok).replace(/}$/, `,"extra":${deepArray(10_000)}}`),
    ];
    for (const body of [...nested.map((n) => JSON.stringify(n)), ...raw]) {
      for (const model of [ok.model, "gem/gemini-test", "anth/claude-test"]) {
        const res = await send(path, body.replace(JSON.stringify(ok.model), JSON.stringify(model)));
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) await expectError(res, res.status, shape);
        else await res.arrayBuffer();
      }
    }
  });

  test("the wrong method on an API path → 405 with Allow, the error in the path's own client shape (it was a 404 'Unknown path')", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await send(path, null, {}, method);
      // GET /v1/responses is Codex's WebSocket upgrade: over plain HTTP the path takes POST
      expect(res.headers.get("allow")).toBe(path === "/v1/responses" && method !== "GET" ? "GET, POST" : "POST");
      const b = await expectError(res, 405, shape, "invalid_request_error");
      expect(b.error.message).not.toContain("Unknown path");
      if (shape === "openai") expect(b.error.code).toBe("method_not_allowed");
    }
  });
});

describe("unknown paths", () => {
  test("any method, any unknown path → JSON 404 in OpenAI shape, never HTML", async () => {
    // (GET / from a browser is sent to /dashboard: test/http/base-url-mistakes.test.ts; a POST there is unknown)
    for (const [method, p] of [
      ["POST", "/"],
      ["GET", "/v1"],
      ["POST", "/v1/completions"],
      ["POST", "/v1/embeddings"],
      ["GET", "/v2/whatever?x=<script>"],
      ["PATCH", "/healthz"],
      ["GET", "/%2e%2e/%2e%2e/etc/passwd"],
      ["POST", "/v1/responses/extra"],
    ] as const) {
      const res = await fetch(`${gw.url}${p}`, { method, headers: { accept: "text/html" }, body: method === "GET" ? undefined : "{}" });
      const b = await expectError(res, 404, "openai", "invalid_request_error");
      expect(b.error.code).toBe("unknown_url");
    }
  });

  test("an unknown path under /v1/messages (or asked with anthropic-version) → 404 in Anthropic's shape (it was OpenAI's; SPEC 2.1: the client's own format)", async () => {
    for (const [method, p, headers] of [
      ["POST", "/v1/messages/batches", {}],
      ["GET", "/v1/messages/batches/msgbatch_01", {}],
      ["POST", "/v1/messages/extra", {}],
      ["POST", "/v1/messagesX", {}],
      ["POST", "/v1/v1/messages/batches", {}],
      ["POST", "/v1/complete", { "anthropic-version": "2023-06-01" }],
    ] as const) {
      const res = await fetch(`${gw.url}${p}`, { method, headers: { accept: "text/html", ...headers }, body: method === "GET" ? undefined : "{}" });
      const b = await expectError(res, 404, "anthropic", "not_found_error");
      expect(b.error.message).toBe(`Unknown path: ${method} ${p}`);
    }
    // an unknown model asked in Anthropic's shape, as Anthropic answers GET /v1/models/{id}
    const model = await fetch(`${gw.url}/v1/models/nope/nothing`, { headers: { "anthropic-version": "2023-06-01" } });
    expect((await expectError(model, 404, "anthropic", "not_found_error")).error.message).toContain("nope/nothing");
  });

  test("a served path asked with another method is a 405 with Allow, not an unknown path", async () => {
    for (const [method, p, allow] of [
      ["PATCH", "/health", "GET, HEAD, OPTIONS"],
      ["POST", "/v1/models", "GET, HEAD"],
      ["DELETE", "/v1/models/some/model", "GET, HEAD, POST"],
      ["GET", "/api/hello", "HEAD"],
    ] as const) {
      const res = await fetch(`${gw.url}${p}`, { method, body: method === "GET" ? undefined : "{}" });
      expect(res.headers.get("allow")).toBe(allow);
      const b = await expectError(res, 405, "openai", "invalid_request_error");
      expect(b.error.code).toBe("method_not_allowed");
    }
  });

  test("an admin API path asked with a method it does not take is a 405 with Allow, not 'Unknown path' (newuser15 N10)", async () => {
    for (const [method, p, allow] of [
      ["PATCH", "/admin/api/keys", "GET, HEAD, POST"],
      ["DELETE", "/admin/api/settings", "GET, HEAD, PATCH"],
      ["GET", "/admin/api/dry-run", "POST"],
      ["POST", "/admin/api/keys/some-key", "PATCH, DELETE"],
      ["PUT", "/admin/api/accounts/some-account/unlock", "POST"],
    ] as const) {
      const res = await fetch(`${gw.url}${p}`, { method, body: method === "GET" ? undefined : "{}" });
      expect(res.headers.get("allow")).toBe(allow);
      const b = await expectError(res, 405, "openai", "invalid_request_error");
      expect(b.error.code).toBe("method_not_allowed");
      expect(b.error.message).toBe(`The method ${method} is not allowed on ${p}; it takes ${allow.replace(/, (?=[A-Z]+$)/, " or ")}.`);
    }
    // a path no admin route serves is still the 404
    const unknown = await expectError(await fetch(`${gw.url}/admin/api/no-such-thing`, { method: "PATCH", body: "{}" }), 404, "openai", "invalid_request_error");
    expect(unknown.error.code).toBe("unknown_url");
  });

  test("a large body to a non-API path is refused before it is parsed (JSON 413 / 411)", async () => {
    await expectError(await send("/admin/api/keys", "x".repeat(2 * 1024 * 1024)), 413, "openai");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"name":"x"}'));
        c.close();
      },
    });
    await expectError(await fetch(`${gw.url}/admin/api/keys`, { method: "POST", body: stream, duplex: "half" } as RequestInit), 411, "openai");
  });
});

describe("the process keeps serving", () => {
  test("after all of the above, normal requests succeed on every endpoint and /health is ok", async () => {
    for (const { path, ok } of ENDPOINTS) {
      const res = await send(path, JSON.stringify(ok));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const h = await fetch(`${gw.url}/health`);
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: "ok", db: "ok" });
    // No request ended in an unhandled error.
    expect(gw.logs.filter((l) => JSON.parse(l).status >= 500)).toEqual([]);
  });
});

describe("wrong field types and model names (found by a new user)", () => {
  const bad = (path: string, body: unknown) => send(path, JSON.stringify(body));

  test("`stream` that is not a boolean is a 400 naming the field, in the client's format", async () => {
    for (const e of ENDPOINTS) {
      const body = await expectError(await bad(e.path, { ...e.ok, stream: "yes" }), 400, e.shape);
      if (e.shape === "openai") expect(body.error.param).toBe("stream");
      else expect(body.error.message).toContain("stream");
    }
    expect(gw.fake.requests.filter((r) => JSON.stringify(r.body).includes('"stream":"yes"'))).toEqual([]);
  });

  test("messages that are not a non-empty array, and token limits that are not positive integers, are 400s", async () => {
    const chat = ENDPOINTS[1];
    for (const messages of ["hi", [], undefined]) {
      const body = await expectError(await bad(chat.path, { ...chat.ok, messages }), 400, "openai");
      expect(body.error.param).toBe("messages");
    }
    await expectError(await bad("/v1/messages", { ...ENDPOINTS[0].ok, max_tokens: "lots" }), 400, "anthropic");
    const r = await expectError(await bad("/v1/responses", { ...ENDPOINTS[2].ok, max_output_tokens: -5 }), 400, "openai");
    expect(r.error.param).toBe("max_output_tokens");
    const i = await expectError(await bad("/v1/responses", { model: "oai/x", input: 42 }), 400, "openai");
    expect(i.error.param).toBe("input");
  });

  test("a bare name that is no alias or combo, guessed to a provider without accounts, is a 404 that says so", async () => {
    const body = await expectError(await bad("/v1/chat/completions", { model: "FAST", messages: [{ role: "user", content: "hi" }] }), 404, "openai");
    expect(body.error.code).toBe("model_not_found");
    expect(body.error.message).toBe(
      'The model `FAST` is not an alias or combo (did you mean "fast"?); it was taken for a model of provider openai, but no openai account is configured: name a configured alias, combo or provider/model, or add an account under `accounts:` in the config file (`provider: openai` with its `api_key`), or set OPENAI_API_KEY before starting switchyard without a config file.',
    );
    const far = await expectError(await bad("/v1/chat/completions", { model: "zzzzzz", messages: [{ role: "user", content: "hi" }] }), 404, "openai");
    expect(far.error.message).toStartWith("The model `zzzzzz` is not an alias or combo; it was taken");
  });

  test("a mistyped combo or alias name (`codng`, `Fast`) is a 404 naming the near one, in every endpoint's own format (newuser13's tryout, J10)", async () => {
    const before = gw.fake.requests.length;
    const near = '(did you mean "coding"?)';
    const m = await expectError(await bad("/v1/messages", { model: "codng", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), 404, "anthropic");
    expect(m.error.message).toContain(`The model \`codng\` is not an alias or combo ${near}`);
    const c = await expectError(await bad("/v1/chat/completions", { model: "codng", messages: [{ role: "user", content: "hi" }] }), 404, "openai");
    expect(c.error.message).toContain(near);
    const r = await expectError(await bad("/v1/responses", { model: "Fast", input: "hi" }), 404, "openai");
    expect(r.error.message).toContain('The model `Fast` is not an alias or combo (did you mean "fast"?)');
    const g = await send("/v1beta/models/codng:generateContent", JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }));
    expect(g.status).toBe(404);
    const gb = (await g.json()) as { error: { code: number; status: string; message: string } };
    expect([gb.error.code, gb.error.status]).toEqual([404, "NOT_FOUND"]);
    expect(gb.error.message).toContain(near);
    expect(gw.fake.requests.length).toBe(before);
  });

  test("provider/model of a provider without accounts is a 503 that says how to add one (a login for a subscription provider)", async () => {
    const cc = await expectError(await bad("/v1/chat/completions", { model: "cc/claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] }), 503, "openai");
    expect(cc.error.message).toBe("No account is configured for provider cc: log in with `switchyard login claude-code` (or adopt the CLI's own login with `switchyard import claude-code`).");
    const gem = await expectError(await bad("/v1/messages", { model: "gemini/gemini-2.5-pro", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }), 503, "anthropic");
    expect(gem.error.message).toBe("No account is configured for provider gemini: add an account under `accounts:` in the config file (`provider: gemini` with its `api_key`), or set GEMINI_API_KEY before starting switchyard without a config file.");
  });

  test("`provider/` with no model after the slash is a 400, nothing goes upstream", async () => {
    const before = gw.fake.requests.length;
    const body = await expectError(await bad("/v1/chat/completions", { model: "oai/", messages: [{ role: "user", content: "hi" }] }), 400, "openai");
    expect(body.error.param).toBe("model");
    expect(gw.fake.requests.length).toBe(before);
  });
});

describe("model list (SPEC 2.1)", () => {
  test("GET /v1/models/{provider/model} works with the slash unencoded", async () => {
    const res = await fetch(`${gw.url}/v1/models/oai/gpt-test`);
    // Not listed (no models configured): a JSON 404 about the model, not the path.
    const body = await expectError(res, 404, "openai");
    expect(body.error.code).toBe("model_not_found");
  });

  test("a malformed percent-escape in a model id is an unknown model, not a 500", async () => {
    const body = await expectError(await fetch(`${gw.url}/v1/models/%E0%A4%A`), 404, "openai");
    expect(body.error.code).toBe("model_not_found");
  });

  test("a remote caller needs a key for the model list, like every /v1 route (G-1/G-2)", async () => {
    const res = await fetch(`${gw.url}/v1/models`, { headers: { "x-forwarded-for": "203.0.113.9" } });
    await expectError(res, 401, "openai");
    expect((await fetch(`${gw.url}/v1/models`)).status).toBe(200);
  });
});

describe("a warning with characters outside ASCII (found by fuzzing wrong values on every lane)", () => {
  test("a temperature outside the target's range is served with the clamp named in X-Switchyard-Warning, never a 500", async () => {
    // Each builder's clamp warning names its range with an en dash ("0–1"), which Headers.set refused:
    // the upstream had answered, and the client got a 500 instead of the reply.
    const cases: Array<[string, unknown, string]> = [
      ["/v1/chat/completions", { model: "anth/claude-test", temperature: 1.7, messages: [{ role: "user", content: "hi" }] }, "0–1"],
      ["/v1/chat/completions", { model: "anth/claude-test", temperature: 1.7, stream: true, messages: [{ role: "user", content: "hi" }] }, "0–1"],
      ["/v1/responses", { model: "gem/gemini-test", temperature: 42, input: "hi" }, "0–2"],
      ["/v1/messages", { model: "gem/gemini-test", temperature: 42, max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }, "0–2"],
      ["/v1beta/models/anth/claude-test:generateContent", { generationConfig: { temperature: 1.5 }, contents: [{ role: "user", parts: [{ text: "hi" }] }] }, "0–1"],
    ];
    for (const [path, body, range] of cases) {
      const res = await send(path, JSON.stringify(body));
      const text = await res.text();
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(text).not.toMatch(/"error"\s*:\s*\{|event: error/);
      const header = res.headers.get("x-switchyard-warning") ?? "";
      expect(header).toMatch(/^[\x20-\x7e]+$/);
      const warnings = JSON.parse(header) as Array<{ code: string; message: string }>;
      expect(warnings.some((w) => /clamp/.test(w.code) && w.message.includes(range))).toBe(true);
    }
    expect(gw.logs.filter((l) => JSON.parse(l).status === 500)).toEqual([]);
  });
});
