/**
 * Tryout finding (routing): with the default `max_attempts` (8, SPEC 6.1), same-account retries of a
 * 503 (up to 3 more per account, SPEC 6.2) spend the whole attempt budget on the first two unhealthy
 * targets, and a healthy third target of the combo is never tried: the client gets the 503 although
 * the gateway could have served it (SPEC's opening: "It falls back across accounts and models before
 * the first byte reaches the client"), and the route trace does not say why the third was skipped.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
providers:
  - id: p
    kind: anthropic
    base_url: "{{FAKE}}/p"
  - id: q
    kind: anthropic
    base_url: "{{FAKE}}/q"
  - id: r
    kind: anthropic
    base_url: "{{FAKE}}/r"
accounts:
  - id: a
    provider: p
    api_key: env:KEY_A
  - id: b
    provider: q
    api_key: env:KEY_B
  - id: c
    provider: r
    api_key: env:KEY_C
combos:
  - name: chain
    targets:
      - model: p/claude-x
      - model: q/claude-x
      - model: r/claude-x
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb", KEY_C: "sk-test-cccccccc" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const unavailable: FakeReply = { status: 503, json: { type: "error", error: { type: "api_error", message: "service unavailable" } } };

test("two targets answering 503 do not use up the attempts before the healthy third target is tried", async () => {
  gw.fake.handle((r: ReceivedRequest) => (r.path.startsWith("/r/") ? simpleReply(r.format!, { text: "served by r", model: r.model }, r.stream) : unavailable));
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "chain", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  const calls = gw.fake.requests.map((r) => r.path.split("/")[1]);
  expect({ status: res.status, reachedR: calls.includes("r") }).toEqual({ status: 200, reachedR: true });
});
