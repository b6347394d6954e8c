/**
 * A request with an empty `Host:` (refused by the Host rule, 421) or none at all (HTTP/1.0; it passes):
 * Bun's `request.url` is then the bare request target (`/v1/chat/completions`, no scheme or authority).
 * Found in the review of session 46: `pathOf` (src/http/browser-guard.ts) looked for the path after a
 * `//` that is not there and dropped the first segment, so an empty Host's 421 was logged and counted as
 * path `/chat/completions`, surface `other`, and written in OpenAI's format on `/v1/messages`; a Gemini
 * route over HTTP/1.0 took its model from the wrong part of the path (`gem/gemini-x` → `ini-x`); and
 * every reader of `new URL(request.url)` threw (a 500 "Something went wrong!" for GET /v1/models/{id}).
 * What a user (operator, client) sees is asserted: the warn line, the metric, the status and body.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`
server:
  host: 127.0.0.1
${fakeProviders([["oai", "openai"], ["anth", "anthropic"], ["gem", "gemini"]])}`);
});
afterAll(async () => {
  await gw?.stop();
});

/** Sends `text` (a request head and body) on a new connection; the status and body of the answer. */
function sendRaw(text: string): Promise<{ status: number; body: string }> {
  const port = Number(new URL(gw.url).port);
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port }, () => s.write(text));
    let out = "";
    const done = () => {
      const cut = out.indexOf("\r\n\r\n");
      resolve({ status: Number(out.split(" ")[1]), body: cut < 0 ? "" : out.slice(cut + 4) });
    };
    const timer = setTimeout(() => s.destroy(), 5000);
    s.on("data", (d) => (out += d.toString()));
    s.on("close", () => {
      clearTimeout(timer);
      done();
    });
    s.on("error", reject);
  });
}

/** A request's text: HTTP/1.1 with `hostLine` (`Host: …`), or HTTP/1.0 without a Host when it is null; closes after the answer. */
function requestText(method: string, path: string, hostLine: string | null, body = ""): string {
  const head = hostLine === null ? `${method} ${path} HTTP/1.0\r\n` : `${method} ${path} HTTP/1.1\r\n${hostLine}\r\nConnection: close\r\n`;
  const length = body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : "";
  return `${head}${length}\r\n${body}`;
}

const refusalLines = () => gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "browser rules refused a request");

test("an empty Host's 421 is logged and counted with the request's own path and the api surface", async () => {
  const body = JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] });
  expect((await sendRaw(requestText("POST", "/v1/chat/completions", "Host: ", body))).status).toBe(421);
  const lines = refusalLines();
  expect(lines.map((l) => ({ reason: l.reason, host: l.host, path: l.path, surface: l.surface }))).toEqual([{ reason: "host", host: "", path: "/v1/chat/completions", surface: "api" }]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics).toContain(`switchyard_browser_refusals_total{reason="host",surface="api"} 1`);
});

test("an empty Host's 421 on /v1/messages is in Anthropic's error format, as with a named Host", async () => {
  const body = JSON.stringify({ model: "anth/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
  const empty = await sendRaw(requestText("POST", "/v1/messages", "Host: ", body));
  const named = await sendRaw(requestText("POST", "/v1/messages", "Host: rebind.example", body));
  expect([empty.status, named.status]).toEqual([421, 421]);
  expect(JSON.parse(empty.body)).toEqual({
    type: "error",
    error: {
      type: "permission_error",
      message:
        'This gateway does not answer for the host name "" (a web page may be trying DNS rebinding). Reach it as localhost or by IP address, or add the name to server.allowed_hosts in the config file.',
    },
  });
  expect(Object.keys(JSON.parse(named.body))).toEqual(["type", "error"]);
  // The empty Host's line was logged by the first test (one line per value a minute); both are counted as the api's.
  expect(refusalLines().map((l) => [l.host, l.path, l.surface])).toEqual([
    ["", "/v1/chat/completions", "api"],
    ["rebind.example", "/v1/messages", "api"],
  ]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics.split("\n").filter((l) => l.startsWith("switchyard_browser_refusals_total{"))).toEqual([`switchyard_browser_refusals_total{reason="host",surface="api"} 3`]);
});

test("a Gemini route over HTTP/1.0 without Host takes its model from the whole path (generateContent, streamGenerateContent)", async () => {
  const body = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });
  for (const prefix of ["/v1beta/models/", "/v1/models/"]) {
    gw.fake.reset();
    const res = await sendRaw(requestText("POST", `${prefix}gem/gemini-x:generateContent`, null, body));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).candidates[0].content.parts[0].text).toBe("Hello from the fake upstream.");
    expect(gw.fake.requests.map((r) => r.model)).toEqual(["gemini-x"]);
  }
  gw.fake.reset();
  const sse = await sendRaw(requestText("POST", "/v1beta/models/gem/gemini-x:streamGenerateContent?alt=sse", null, body));
  expect(sse.status).toBe(200);
  expect(sse.body).toContain('"modelVersion":"gemini-x"');
  expect(gw.fake.requests.map((r) => r.model)).toEqual(["gemini-x"]);
});

test("over HTTP/1.0 without Host, paths read from the URL answer as with a Host (no 500): model lookups, an unknown path, the admin API, the dashboard", async () => {
  const paths = ["/v1/models/oai/gpt-test", "/v1beta/models/gem/gemini-x", "/v1/models/gem/gemini-x", "/nope/deeper/path", "/admin/api/keys", "/dashboard/nope"];
  for (const path of paths) {
    const gemini = path === "/v1/models/gem/gemini-x";
    const extra = gemini ? "x-goog-api-client: genai-js/1.0\r\n" : "";
    const without = await sendRaw(requestText("GET", path, null).replace("\r\n\r\n", `\r\n${extra}\r\n`));
    const withHost = await sendRaw(requestText("GET", path, "Host: 127.0.0.1").replace("\r\n\r\n", `\r\n${extra}\r\n`));
    expect({ path, status: without.status, body: without.body }).toEqual({ path, status: withHost.status, body: withHost.body });
    expect(without.status).not.toBe(500);
  }
});
