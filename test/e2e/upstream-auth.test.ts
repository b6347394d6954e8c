/**
 * An upstream that refuses switchyard's own account credential (SPEC 6.3 row "401 / credential 403"):
 * what the client hears, in its own format. The provider refused the gateway's account key, not the
 * client's: a 503 `upstream_auth_failed` naming the provider's answer, never the upstream's 401 (which
 * clients read as their own key being wrong: Claude Code asked to /login), and never the account's name
 * (SPEC 2.4).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: pa1
    provider: p
    api_key: env:KEY_A1
  - id: pa2
    provider: p
    api_key: env:KEY_A2
`;
const ENV = { KEY_A1: "sk-test-auth-one-1111", KEY_A2: "sk-test-auth-two-2222" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: ENV });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  gw.fake.reset();
  for (const a of ["pa1", "pa2"]) await gw.app.store.clearLock(a);
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  gw.app.registry.resetCounters();
});

/** Every account answers with `status` and an Anthropic error of `type` whose message echoes the key it got. */
function refuse(status: number, type: string, message: string) {
  gw.fake.handle((r) => ({ status, json: { type: "error", error: { type, message: `${message} (${r.headers["x-api-key"]})` } } }));
}

const post = (path: string, body: unknown) => fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** One request per client format, with where its error message sits and its error type/status member. */
const CLIENTS: Array<{ name: string; path: string; body: unknown; message: (b: any) => string; kind: (b: any) => unknown; wantKind: unknown }> = [
  { name: "Chat", path: "/v1/chat/completions", body: { model: "p/claude-x", messages: [{ role: "user", content: "hi" }] }, message: (b) => b.error.message, kind: (b) => [b.error.type, b.error.code], wantKind: ["server_error", "upstream_auth_failed"] },
  { name: "Messages", path: "/v1/messages", body: { model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }, message: (b) => b.error.message, kind: (b) => [b.type, b.error.type], wantKind: ["error", "api_error"] },
  { name: "Responses", path: "/v1/responses", body: { model: "p/claude-x", input: "hi" }, message: (b) => b.error.message, kind: (b) => [b.error.type, b.error.code], wantKind: ["server_error", "upstream_auth_failed"] },
  {
    name: "Gemini",
    path: "/v1beta/models/p/claude-x:generateContent",
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    message: (b) => b.error.message,
    kind: (b) => [b.error.code, b.error.status],
    // Google writes a 503 UNAVAILABLE (INTERNAL is its 500)
    wantKind: [503, "UNAVAILABLE"],
  },
];

describe("the provider refuses every account's credential", () => {
  for (const c of CLIENTS) {
    test(`${c.name}: 503 upstream_auth_failed that does not blame the client's key, in its own format`, async () => {
      refuse(401, "authentication_error", "invalid x-api-key");
      const res = await post(c.path, c.body);
      const text = await res.text();
      expect([c.name, res.status]).toEqual([c.name, 503]);
      const body = JSON.parse(text);
      expect(c.kind(body)).toEqual(c.wantKind);
      const message = c.message(body);
      expect(message).toContain("No account of p could authenticate upstream");
      expect(message).toContain("401: invalid x-api-key");
      expect(message).toContain("not about the key you sent to switchyard");
      // Both accounts were tried (SPEC 6.3: next account), neither is named, no key is shown.
      expect(gw.fake.requests.length).toBe(2);
      for (const secret of ["pa1", "pa2", ENV.KEY_A1, ENV.KEY_A2]) expect(text).not.toContain(secret);
      expect(text).toContain("[redacted]");
    });
  }

  test("streamed: the same 503 before anything is committed", async () => {
    refuse(401, "authentication_error", "invalid x-api-key");
    const res = await post("/v1/messages", { model: "p/claude-x", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.message).toContain("No account of p could authenticate upstream");
  });

  test("a credential 403 reads the same way", async () => {
    refuse(403, "permission_error", "OAuth token has been revoked");
    const res = await post("/v1/chat/completions", { model: "p/claude-x", messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.message).toContain("(403: OAuth token has been revoked");
  });

  test("one account refused, the other serves: the client sees the reply, not the refusal", async () => {
    gw.fake.handle((r) =>
      r.headers["x-api-key"] === ENV.KEY_A1 ? { status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } } : simpleReply(r.format!, { text: "fine" }, r.stream),
    );
    const res = await post("/v1/messages", { model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(200);
  });

  test("another kind of failure after a refusal is what the client hears (the last error), not the refusal", async () => {
    gw.fake.handle((r) =>
      r.headers["x-api-key"] === ENV.KEY_A1
        ? { status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }
        : { status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "top_k: unsupported value" } } },
    );
    // Whichever account is tried first, the 400 returns at once or comes last.
    const res = await post("/v1/messages", { model: "p/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] });
    expect(res.status).toBe(400);
  });
});
