/**
 * A failed attempt's billed usage counts under the attempt's own provider, model and account (SPEC
 * 9.5, O-1). Session 46 made the usage a provider reported on an attempt that then failed count, but
 * added it to the served reply's row, whose provider, model and account are the served one's; the
 * Usage page's split of money spent vs subscriptions' use at API prices (src/store/usage.ts
 * subscriptionCostSql, by each row's provider) then put it on the wrong side when the two providers
 * differ in kind, and usage by model and account and /metrics counted its tokens under the served
 * model. Since 2026-12-08 each billed failed attempt is a usage row of its own (src/store/rows.ts
 * SPLIT): summed under its provider, model and account, but no request (not counted, not listed);
 * the call still shows the request's total tokens and cost, and the key's USD budget counts the total.
 *
 * A combo [paid API key → Claude Code subscription]: the API key's stream reports usage (message_start:
 * 1000 in, 1 out, $0.1001 at $100/M) and breaks before content (the provider bills it); the
 * subscription serves (11 in, 7 out: $0.0018 at API prices). Before the fix GET /admin/api/usage said
 * cost {spentUsd 0, subscriptionUsd 0.4022} for four broken attempts; it is {0.4004, 0.0018}. And the
 * reverse, [subscription → paid API key]: the subscription's broken attempts are its use at API
 * prices, not money spent (before: all of it was spent).
 */
import { afterEach, expect, test } from "bun:test";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import type { TestGateway } from "../support/gateway.ts";
import { startFakeVendor, startPaidBesideSubscription } from "../oauth/fake-oauth.ts";

let gw: TestGateway | undefined;
let stopVendor: (() => Promise<void>) | undefined;
afterEach(async () => {
  await gw?.stop();
  await stopVendor?.();
  gw = undefined;
  stopVendor = undefined;
});

const KEY = "sy-test-failed-attempt-subscription";
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

/** A gateway with combo `mixed` over `first` then `second` (`paid/claude-v`, `cc/claude-v`); `first`'s streams break after message_start. */
async function run(first: "paid" | "cc", second: "paid" | "cc") {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  stopVendor = () => vendor.stop();
  gw = await startPaidBesideSubscription(
    upstream,
    vendor,
    `keys:
  - { name: client, key: ${KEY}, limits: { budgets: [{ window: 1d, usd: 50 }] } }
combos:
  - name: mixed
    targets:
      - model: ${first}/claude-v
      - model: ${second}/claude-v
`,
  );
  const isPaid = (path: string) => path.startsWith("/paid");
  upstream.handle((req) => (isPaid(req.path) === (first === "paid") ? { sse: broken, reset_after_bytes: Buffer.byteLength(broken) } : { sse: whole }));

  const r = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY },
    body: JSON.stringify({ model: "mixed", stream: true, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(200);
  expect(await r.text()).toContain("hello");
  const broke = upstream.requests.filter((q) => isPaid(q.path) === (first === "paid")).length;
  expect(broke).toBeGreaterThanOrEqual(1);

  const admin = async (path: string) => (await fetch(`${gw!.url}/admin/api${path}`)).json() as Promise<any>;
  let calls: any[] = [];
  for (const end = Date.now() + 5000; calls.length === 0 && Date.now() < end; await Bun.sleep(50)) calls = (await admin("/calls?limit=10")).calls;
  await Bun.sleep(100);
  const by = async (g: string) =>
    Object.fromEntries(((await admin(`/usage?by=${g}`)).rows as any[]).map((x) => [x.group, { requests: x.requests, inputTokens: x.inputTokens, outputTokens: x.outputTokens, costUsd: x.costUsd }]));
  const usage = (await admin("/usage?by=provider")) as { cost: { spentUsd: number; subscriptionUsd: number } };
  const used = (await admin("/keys")).keys.find((k: any) => k.name === "client").use.budgets[0]?.used ?? 0;
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  const input = (provider: string) => Number(new RegExp(`^switchyard_tokens_total\\{provider="${provider}",model="claude-v",kind="input"\\} (\\d+)`, "m").exec(metrics)?.[1] ?? 0);
  return { broke, calls, cost: usage.cost, byProvider: await by("provider"), byModel: await by("model"), byAccount: await by("account"), used, metricsInput: { paid: input("paid"), cc: input("cc") } };
}

const usd = (n: number) => Number(n.toFixed(6));

test("a broken API-key attempt, served by a subscription: its cost is money spent, its tokens the API key's (by provider, model, account, /metrics)", async () => {
  const { broke, calls, cost, byProvider, byModel, byAccount, used, metricsInput } = await run("paid", "cc");
  // the call (Calls list, `switchyard calls`) is one request with its total tokens and cost
  expect(calls).toHaveLength(1);
  expect(calls[0].usage).toEqual({ inputTokens: 1000 * broke + 11, outputTokens: broke + 7 });
  expect(calls[0].costUsd).toBeCloseTo(0.1001 * broke + 0.0018, 10);
  expect(used).toBeCloseTo(0.1001 * broke + 0.0018, 10);
  // the paid API key's billed attempts are money spent; only the subscription's reply is subscription use
  expect(cost).toEqual({ spentUsd: usd(0.1001 * broke), subscriptionUsd: 0.0018 });
  const paid = { requests: 0, inputTokens: 1000 * broke, outputTokens: broke, costUsd: usd(0.1001 * broke) };
  const cc = { requests: 1, inputTokens: 11, outputTokens: 7, costUsd: 0.0018 };
  expect(byProvider).toEqual({ paid, cc });
  expect(byModel).toEqual({ "paid/claude-v": paid, "cc/claude-v": cc });
  expect(byAccount).toEqual({ "paid-key": paid, "cc-file": cc });
  expect(metricsInput).toEqual({ paid: 1000 * broke, cc: 11 });
}, 30_000);

test("the reverse: a broken subscription attempt, served by an API key, is subscription use, not money spent", async () => {
  const { broke, calls, cost, byProvider, byModel, byAccount, used, metricsInput } = await run("cc", "paid");
  expect(calls).toHaveLength(1);
  expect(calls[0].usage).toEqual({ inputTokens: 1000 * broke + 11, outputTokens: broke + 7 });
  expect(calls[0].costUsd).toBeCloseTo(0.1001 * broke + 0.0018, 10);
  // the key's USD budget counts every attempt's cost, as a subscription's served request at API prices
  expect(used).toBeCloseTo(0.1001 * broke + 0.0018, 10);
  expect(cost).toEqual({ spentUsd: 0.0018, subscriptionUsd: usd(0.1001 * broke) });
  const cc = { requests: 0, inputTokens: 1000 * broke, outputTokens: broke, costUsd: usd(0.1001 * broke) };
  const paid = { requests: 1, inputTokens: 11, outputTokens: 7, costUsd: 0.0018 };
  expect(byProvider).toEqual({ paid, cc });
  expect(byModel).toEqual({ "paid/claude-v": paid, "cc/claude-v": cc });
  expect(byAccount).toEqual({ "paid-key": paid, "cc-file": cc });
  expect(metricsInput).toEqual({ paid: 11, cc: 1000 * broke });
}, 30_000);
