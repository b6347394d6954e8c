/**
 * FOUND (review of session 46, cac2b823 "Usage a provider reported on an attempt that then failed is
 * counted"): a failed attempt's billed cost is added to the served reply's row, whose provider_id is
 * the served provider's, so the Usage page's split of money spent vs subscriptions' use at API prices
 * (SPEC 9.5; `costUsd − subscriptionUsd is what was spent`, src/admin/reply-schemas.ts) puts it on the
 * wrong side when the two attempts' providers differ in kind (src/limits/accounting.ts addBilled adds to
 * rec.costUsd; src/store/usage.ts subscriptionCostSql splits by the row's provider_id).
 *
 * What a user notices: a combo [paid API key → Claude Code subscription]. The API key's stream reported
 * usage (message_start: 1000 in, 1 out, $0.1001 at $100/M) and broke before content, so the provider
 * bills it; the subscription served the request (11 in, 7 out: $0.0018 at API prices). GET /admin/api/usage
 * (and the Overview's Cost tile, `switchyard usage`) say nothing was spent: the API key's real cost is
 * shown as subscription use.
 * Expected: cost.spentUsd = the paid attempts' cost (0.1001 per broken attempt), subscriptionUsd 0.0018.
 * Actual:   spentUsd 0, subscriptionUsd = everything (0.1001 × attempts + 0.0018).
 */
import { afterAll, expect, test } from "bun:test";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeVendor, vendorProviders } from "../oauth/fake-oauth.ts";

let gw: TestGateway | undefined;
let stopVendor: (() => Promise<void>) | undefined;
afterAll(async () => {
  await gw?.stop();
  await stopVendor?.();
});

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const start = (usage: Record<string, number>) =>
  ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-v", content: [], stop_reason: null, stop_sequence: null, usage } });
const broken = start({ input_tokens: 1000, output_tokens: 1 });
const whole =
  start({ input_tokens: 11, output_tokens: 1 }) +
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hello" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } }) +
  ev("message_stop", { type: "message_stop" });

test("a broken API-key attempt's billed cost, served by a subscription: GET /usage counts it as money spent", async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  stopVendor = () => vendor.stop();
  const t = vendor.seed({ name: "value", models: ["claude-v"] });
  const yaml =
    vendorProviders(vendor.url) +
    `  - id: paid
    kind: anthropic
    base_url: "{{FAKE}}/paid"
accounts:
  - id: cc-file
    provider: cc
    access_token: env:CC_ACCESS
    refresh_token: env:CC_REFRESH
    expires_at: ${Date.now() + 3600_000}
  - id: paid-key
    provider: paid
    api_key: env:PAID_KEY
combos:
  - name: mixed
    targets:
      - model: paid/claude-v
      - model: cc/claude-v
settings:
  pricing:
    cc/claude-v: { input: 100, output: 100 }
    paid/claude-v: { input: 100, output: 100 }
`;
  gw = await startGateway(yaml, { fake: upstream, env: { CC_ACCESS: t.accessToken, CC_REFRESH: t.refreshToken, PAID_KEY: "sk-test-paid-value" } });
  upstream.handle((req) => (req.path.startsWith("/paid") ? { sse: broken, reset_after_bytes: Buffer.byteLength(broken) } : { sse: whole }));

  const r = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "mixed", stream: true, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(200);
  expect(await r.text()).toContain("hello");
  const paidAttempts = upstream.requests.filter((q) => q.path.startsWith("/paid")).length;
  expect(paidAttempts).toBeGreaterThanOrEqual(1);

  let calls: any[] = [];
  for (const end = Date.now() + 5000; calls.length === 0 && Date.now() < end; await Bun.sleep(50)) calls = ((await (await fetch(`${gw.url}/admin/api/calls?limit=1`)).json()) as any).calls;
  // the row itself adds both (as the session's change meant): the served reply's and the broken attempts' cost
  expect(calls[0].costUsd).toBeCloseTo(0.1001 * paidAttempts + 0.0018, 10);

  const usage = (await (await fetch(`${gw.url}/admin/api/usage?by=provider`)).json()) as { cost: { spentUsd: number; subscriptionUsd: number } };
  // the paid API key's billed attempts are money spent; only the subscription's reply is subscription use
  expect(usage.cost).toEqual({ spentUsd: Number((0.1001 * paidAttempts).toFixed(6)), subscriptionUsd: 0.0018 });
});
