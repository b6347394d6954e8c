/**
 * A request's headers as the pipeline reads them (pipeline/client-headers.ts): taken once, they answer
 * every lookup exactly as the request's own `Headers` does (present, absent, repeated, `set-cookie`,
 * names that are also properties of every object), and through the real gateway an upstream gets the
 * client headers SPEC P-3 lets through: the user agent always, a format's own headers and the
 * `x-opencode-*` headers only to a provider of the client's format, never the client's key or cookies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ClientHeaders, headersWithPrefix } from "../../pipeline/client-headers.ts";
import { SESSION_HEADERS } from "../../pipeline/affinity.ts";
import { TOKEN_SAVER_HEADER } from "../../pipeline/save-tokens.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/** The headers of a request as Bun's server hands it over (the form the pipeline reads). */
async function received(headers: [string, string][]): Promise<Headers> {
  let got: Headers | undefined;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      got = req.headers;
      return new Response("ok");
    },
  });
  try {
    await (await fetch(server.url, { method: "POST", headers: headers, body: "{}" })).text();
  } finally {
    server.stop(true);
  }
  return got!;
}

const SENT: [string, string][] = [
  ["User-Agent", "opencode/0.9"],
  ["X-Opencode-Session", "ses_1"],
  ["x-opencode-tag", "a"],
  ["x-opencode-tag", "b"],
  ["Cookie", "c=1"],
  ["Set-Cookie", "s=1"],
  ["set-cookie", "s=2"],
  ["__proto__", "p"],
  ["constructor", "c"],
  ["X-Session-Id", "conv-7"],
];

describe("ClientHeaders", () => {
  test("answers get and has as the request's own Headers, for present, absent, repeated and odd names", async () => {
    const raw = await received(SENT);
    const taken = new ClientHeaders(raw);
    const names = [
      ...SENT.map(([n]) => n.toLowerCase()),
      "authorization", "x-api-key", "origin", "x-forwarded-for", "x-real-ip", "content-length", "host",
      "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "__defineGetter__", "tostring", ...SESSION_HEADERS, TOKEN_SAVER_HEADER,
    ];
    for (const name of names) {
      expect({ name, value: taken.get(name), has: taken.has(name) }).toEqual({ name, value: raw.get(name), has: raw.has(name) });
    }
    expect(taken.get("x-opencode-tag")).toBe("a, b");
    expect(taken.raw).toBe(raw);
  });

  test("withPrefix visits each header of the prefix once with its value, as a forEach over the Headers does", async () => {
    const raw = await received(SENT);
    const seen = (h: Headers | ClientHeaders) => {
      const out: string[] = [];
      headersWithPrefix(h, "x-opencode-", (name, value) => out.push(`${name}=${value}`));
      return out.sort();
    };
    expect(seen(new ClientHeaders(raw))).toEqual(["x-opencode-session=ses_1", "x-opencode-tag=a, b"]);
    expect(seen(raw)).toEqual(seen(new ClientHeaders(raw)));
  });

  test("withPrefix into a Headers sets there what the callback is given (an executor's copy of the x-opencode-* headers)", async () => {
    const raw = await received(SENT);
    for (const from of [new ClientHeaders(raw), raw]) {
      const into = new Headers({ "content-type": "application/json" });
      headersWithPrefix(from, "x-opencode-", into);
      expect([...into.entries()].sort()).toEqual([["content-type", "application/json"], ["x-opencode-session", "ses_1"], ["x-opencode-tag", "a, b"]]);
    }
  });

  test("the names the stages look up are lower case (the form ClientHeaders keys its headers by)", () => {
    for (const name of [...SESSION_HEADERS, TOKEN_SAVER_HEADER]) expect(name).toBe(name.toLowerCase());
  });
});

describe("an upstream gets the client headers P-3 lets through (the real gateway)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  const post = (path: string, body: unknown, headers: [string, string][]) =>
    fetch(`${gw.url}${path}`, { method: "POST", headers: [["content-type", "application/json"], ...headers], body: JSON.stringify(body) });
  const MSG = (model: string) => ({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] });

  test("a Chat client to a Chat provider: its user agent and x-opencode-* headers (repeated ones joined), no cookie", async () => {
    const res = await post("/v1/chat/completions", { model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }, SENT);
    expect(res.status).toBe(200);
    const h = gw.fake.requests.at(-1)!.headers;
    expect(h["user-agent"]).toBe("opencode/0.9");
    expect(h["x-opencode-session"]).toBe("ses_1");
    expect(h["x-opencode-tag"]).toBe("a, b");
    expect(h.cookie).toBeUndefined();
    expect(h["x-session-id"]).toBeUndefined();
  });

  test("a Messages client: its Anthropic and x-opencode-* headers to an Anthropic provider, only the user agent to a Chat one", async () => {
    const headers: [string, string][] = [...SENT, ["anthropic-beta", "tools-2099"], ["anthropic-version", "2023-06-01"], ["x-api-key", "sk-ant-client-placeholder"]];
    expect((await post("/v1/messages", MSG("anth/claude-test"), headers)).status).toBe(200);
    const same = gw.fake.requests.at(-1)!.headers;
    expect(same["anthropic-beta"]).toBe("tools-2099");
    expect(same["x-opencode-tag"]).toBe("a, b");
    expect(same["x-api-key"]).toBe("sk-fake-upstream-secret");
    expect((await post("/v1/messages", MSG("oai/gpt-test"), headers)).status).toBe(200);
    const other = gw.fake.requests.at(-1)!.headers;
    expect(other["user-agent"]).toBe("opencode/0.9");
    expect(other["anthropic-beta"]).toBeUndefined();
    expect(other["x-opencode-session"]).toBeUndefined();
    expect(JSON.stringify(other)).not.toContain("sk-ant-client-placeholder");
  });

  test("W3C trace context (traceparent, tracestate) reaches a provider of any format as the client sent it while no spans are exported (SPEC O-5, P-3)", async () => {
    const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const headers: [string, string][] = [["traceparent", tp], ["tracestate", "vendor=abc"]];
    expect((await post("/v1/messages", MSG("oai/gpt-test"), headers)).status).toBe(200);
    const h = gw.fake.requests.at(-1)!.headers;
    expect([h.traceparent, h.tracestate]).toEqual([tp, "vendor=abc"]);
  });
});
