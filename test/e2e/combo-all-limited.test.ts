/**
 * A combo whose every target is rate-limited (newuser12b H3): the client's Retry-After is the earliest
 * time any target's account frees up (SPEC 2.4), not the longest cooldown, and the 429 names every
 * target and why, not only the first target's provider.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
providers:
  - id: sub
    kind: anthropic
    base_url: "{{FAKE}}/sub"
  - id: paid
    kind: anthropic
    base_url: "{{FAKE}}/paid"
accounts:
  - id: s1
    provider: sub
    api_key: env:KEY_S
  - id: k1
    provider: paid
    api_key: env:KEY_K
combos:
  - name: claude
    targets:
      - model: sub/claude-x
      - model: paid/claude-x
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_S: "sk-test-sub", KEY_K: "sk-test-paid" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const limited = (seconds: number): FakeReply => ({ status: 429, headers: { "retry-after": String(seconds) }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } });
const post = () =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });

test("every target rate-limited: Retry-After is the earliest end (the upstream's 45 s, not the other target's 100 s); the message names both targets", async () => {
  let paidLimited = false;
  gw.fake.handle((r: ReceivedRequest) => {
    if (r.path.startsWith("/sub/")) return limited(100);
    if (paidLimited) return limited(45);
    return simpleReply(r.format!, { text: "served by paid", model: r.model }, r.stream);
  });
  // 1. The subscription target is limited for 100 s; the paid one serves.
  const first = await post();
  expect(first.status).toBe(200);
  expect(first.headers.get("x-switchyard-fallback")).toBe("1");
  // 2. The paid one is limited too, for 45 s: its own Retry-After is the earliest time anything frees up.
  paidLimited = true;
  const second = await post();
  expect(second.status).toBe(429);
  const ra2 = Number(second.headers.get("retry-after"));
  expect(ra2).toBeGreaterThanOrEqual(44);
  expect(ra2).toBeLessThanOrEqual(45);
  // 3. Now both cool down without an upstream call: the earliest cooldown's end, and both targets named.
  const calls = gw.fake.requests.length;
  const third = await post();
  expect(gw.fake.requests.length).toBe(calls);
  expect(third.status).toBe(429);
  const ra3 = Number(third.headers.get("retry-after"));
  expect(ra3).toBeGreaterThanOrEqual(44);
  expect(ra3).toBeLessThanOrEqual(45);
  const message = ((await third.json()) as { error: { type: string; message: string } }).error;
  expect(message.type).toBe("rate_limit_error");
  expect(message.message).toMatch(/^No target can serve this request right now: sub\/claude-x: cooling down [^;]*; paid\/claude-x: cooling down [^;]*\.$/);
});
