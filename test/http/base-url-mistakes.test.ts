/**
 * Base-URL mistakes GUI apps make, through a real gateway (src/http/path-aliases.ts): a base URL ending
 * in "/" asks for `/v1//chat/completions`, served as `/v1/chat/completions` on every API path (the browser
 * rules, CORS and the body limit as on the plain path); a base URL without `/v1` gets a 404 in the
 * client's format naming the path under `/v1` and the base URL to set; an endpoint the gateway does not
 * serve (embeddings, legacy completions, audio, images, moderations) gets a 404 saying so; the base
 * address `/` sends a browser to `/dashboard` and names the dashboard and the API paths to anyone else.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { connect } from "../support/responses-socket.ts";

const APP = "http://localhost:5173";
const YAML = `
server:
  cors_origins: ["${APP}"]
${fakeProviders([["anth", "anthropic"], ["oai", "openai"], ["gem", "gemini"]])}`;
const CHAT = { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] };
const MSG = { model: "anth/claude-test", max_tokens: 20, messages: [{ role: "user", content: "hi" }] };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("a base URL ending in '/': repeated slashes are served as one", () => {
  const CASES: Array<[string, unknown, (b: any) => unknown]> = [
    ["/v1//chat/completions", CHAT, (b) => b.object],
    ["/v1///chat//completions", CHAT, (b) => b.object],
    ["/v1//responses", { model: "oai/gpt-test", input: "hi" }, (b) => b.object],
    ["/v1//messages", MSG, (b) => b.type],
    ["/v1//messages/count_tokens", MSG, (b) => typeof b.input_tokens],
    ["/v1beta//models/gem/gemini-test:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, (b) => Array.isArray(b.candidates)],
  ];
  const EXPECTED = ["chat.completion", "chat.completion", "response", "message", "number", true];
  CASES.forEach(([path, body, pick], i) => {
    test(`POST ${path} is served`, async () => {
      const res = await send("POST", path, body);
      const text = await res.text();
      expect([res.status, text.slice(0, 300)]).toEqual([200, expect.any(String)]);
      expect(pick(JSON.parse(text))).toBe(EXPECTED[i]!);
    });
  });

  test("a streamed reply comes back as server-sent events", async () => {
    const res = await send("POST", "/v1//chat/completions", { ...CHAT, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    expect(text).toContain('"object":"chat.completion.chunk"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  test("GET /v1//models is the model list; GET /v1//chat/completions the 405 of the path it names", async () => {
    const list = await send("GET", "/v1//models");
    expect(list.status).toBe(200);
    expect(((await list.json()) as { object: string }).object).toBe("list");
    const wrong = await send("GET", "/v1//chat/completions");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  test("Codex's Responses WebSocket at /v1//responses (a base URL ending in '/'): the socket, not the 405 of GET /v1/responses", async () => {
    const c = await connect(gw.url, {}, "/v1//responses");
    try {
      c.send({ type: "response.create", model: "oai/gpt-test", input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], store: false });
      const frames = await c.untilTerminal();
      expect(frames[0]?.type).toBe("response.created");
      expect(frames.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed" } });
    } finally {
      c.ws.close();
    }
    // the browser rules hold for it: a foreign key-less page gets no socket
    await expect(connect(gw.url, { origin: "https://evil.example" }, "/v1//responses")).rejects.toThrow("socket error");
    // without the upgrade, the 405 of the path it names, as before
    const plain = await send("GET", "/v1//responses");
    expect([plain.status, plain.headers.get("allow")]).toEqual([405, "POST"]);
  });

  test("a body over the other routes' 1 MiB bound is read with the API's limit, as on the plain path", async () => {
    const res = await send("POST", "/v1//chat/completions", { ...CHAT, metadata: { pad: "x".repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(200);
  });

  test("the browser rules hold: a listed origin gets its preflight and CORS headers, a foreign key-less page a 403 with nothing sent upstream", async () => {
    const pre = await send("OPTIONS", "/v1//chat/completions", undefined, { origin: APP, "access-control-request-method": "POST" });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(APP);
    const ok = await send("POST", "/v1//chat/completions", CHAT, { origin: APP });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP);
    const before = gw.fake.requests.length;
    const evil = await send("POST", "/v1//messages", MSG, { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    // In Anthropic's format: the path is read with its slashes collapsed.
    expect(((await evil.json()) as { type: string }).type).toBe("error");
    expect(gw.fake.requests.length).toBe(before);
  });
});

describe("a base URL without /v1: a 404 naming the right path, in the client's format", () => {
  for (const [method, path, body] of [
    ["POST", "/chat/completions", CHAT],
    ["POST", "/responses", { model: "oai/gpt-test", input: "hi" }],
    ["GET", "/models", undefined],
    ["GET", "/models/oai/gpt-test", undefined],
    ["POST", "//chat/completions", CHAT],
  ] as const) {
    test(`${method} ${path}`, async () => {
      const before = gw.fake.requests.length;
      const res = await send(method, path, body);
      expect(res.status).toBe(404);
      const b = (await res.json()) as { error: { message: string; type: string; code: string } };
      expect(b.error.code).toBe("unknown_url");
      expect(b.error.message).toContain(`the path is ${method} /v1${path.replace("//", "/")}`);
      expect(b.error.message).toContain(`Set the app's base URL to http://127.0.0.1:${gw.app.port}/v1`);
      expect(gw.fake.requests.length).toBe(before);
    });
  }

  test("POST /messages: Anthropic's error shape", async () => {
    const res = await send("POST", "/messages", MSG);
    expect(res.status).toBe(404);
    const b = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(b.type).toBe("error");
    expect(b.error.type).toBe("not_found_error");
    expect(b.error.message).toContain("the path is POST /v1/messages");
  });
});

describe("a base URL with /v1 twice (…/v1/v1): a 404 naming the path with /v1 once, as a base URL without /v1 gets", () => {
  for (const [method, path, body] of [
    ["POST", "/v1/v1/chat/completions", CHAT],
    ["POST", "/v1/v1/responses", { model: "oai/gpt-test", input: "hi" }],
    ["GET", "/v1/v1/models", undefined],
    ["GET", "/v1/v1/models/oai/gpt-test", undefined],
    ["POST", "/v1//v1/chat/completions", CHAT],
  ] as const) {
    test(`${method} ${path}`, async () => {
      const before = gw.fake.requests.length;
      const res = await send(method, path, body);
      expect(res.status).toBe(404);
      const b = (await res.json()) as { error: unknown };
      expect(b.error).toEqual({
        message:
          `Unknown path: ${method} ${path.replace("//", "/")}. The path has /v1 twice: it is ${method} ${path.replace("//", "/").slice(3)}. ` +
          `Set the app's base URL to http://127.0.0.1:${gw.app.port}/v1, with /v1 once (an app that adds /v1 itself, such as the Anthropic SDK, takes it without /v1).`,
        type: "invalid_request_error",
        param: null,
        code: "unknown_url",
      });
      expect(gw.fake.requests.length).toBe(before);
    });
  }

  test("POST /v1/v1/messages is served (the Anthropic SDK's path for a base URL ending in /v1); /v1/v1/messages/batches is Anthropic's plain 404", async () => {
    const res = await send("POST", "/v1/v1/messages", MSG);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { type: string }).type).toBe("message");
    const batches = await send("POST", "/v1/v1/messages/batches", MSG);
    expect(batches.status).toBe(404);
    expect(((await batches.json()) as { error: { message: string } }).error.message).toBe("Unknown path: POST /v1/v1/messages/batches");
  });
});

describe("endpoints the gateway does not serve say so", () => {
  for (const [path, what] of [
    ["/v1/embeddings", "embeddings"],
    ["/v1/completions", "the legacy completions API"],
    ["/v1/audio/speech", "audio"],
    ["/v1/audio/transcriptions", "audio"],
    ["/v1/images/generations", "images"],
    ["/v1/moderations", "moderations"],
  ] as const) {
    test(`POST ${path}`, async () => {
      const res = await send("POST", path, { model: "oai/gpt-test", input: "hi" });
      expect(res.status).toBe(404);
      const b = (await res.json()) as { error: { message: string; code: string } };
      expect(b.error.code).toBe("unknown_url");
      expect(b.error.message).toContain(`This gateway does not serve ${what}`);
    });
  }

  test("any other unknown path keeps the plain 404", async () => {
    const res = await send("GET", "/v2/whatever");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("Unknown path: GET /v2/whatever");
  });
});

describe("the base address itself (GET /, what scripts/start prints)", () => {
  test("a browser (Accept: text/html) is sent to /dashboard", async () => {
    const accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for (const method of ["GET", "HEAD"]) {
      const res = await fetch(`${gw.url}/`, { method, redirect: "manual", headers: { accept } });
      expect({ method, status: res.status, location: res.headers.get("location") }).toEqual({ method, status: 302, location: "/dashboard" });
    }
    // Followed as a browser does: the dashboard's page.
    const page = await fetch(`${gw.url}/`, { headers: { accept } });
    expect({ status: page.status, url: new URL(page.url).pathname, type: page.headers.get("content-type") }).toMatchObject({ status: 200, url: "/dashboard" });
    expect(await page.text()).toContain("<html");
  });

  test("an API client gets the JSON 404 naming /dashboard and the API paths", async () => {
    for (const headers of [{}, { accept: "application/json" }, { accept: "*/*" }] as Record<string, string>[]) {
      const res = await fetch(`${gw.url}/`, { headers });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const b = (await res.json()) as { error: { message: string; code: string } };
      expect(b.error.code).toBe("unknown_url");
      expect(b.error.message).toStartWith("Unknown path: GET /. This is switchyard's base address: the dashboard is at /dashboard");
      for (const p of ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/models", "/v1beta/models"]) expect(b.error.message).toContain(p);
    }
    const post = await send("POST", "/", CHAT);
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { message: string } }).error.message).toStartWith("Unknown path: POST /. This is switchyard's base address");
  });
});
