/**
 * The Calls page shows a call's web searches and a partly unpriced call's cost (README "Left from
 * session 46's work"). Until 2026-12-08 a call's server-side web searches, stored since session 46 and
 * priced into its cost, were shown by the admin API only; and a call that was `unpriced` while its
 * `costUsd` held the priced part (a failed attempt at a priced model whose usage the provider reported,
 * then served by a model without a price) read "unpriced" with "no price is known for this model, so
 * no cost is counted", though its priced part counted against USD budgets.
 *
 * Real gateway (one Anthropic provider at the fake upstream), real Chromium. Three calls:
 * - `ant/claude-sonnet-4-5`, 1000 input and 500 output tokens, 2 web searches: 0.0105 + 2 × $10/1000 = $0.0305;
 * - combo `mix` (claude-sonnet-4-5, then house-model), streamed: claude-sonnet-4-5's stream reports
 *   2000 input tokens and 1 output then breaks, four attempts (0.006015 each, $0.02406), then
 *   house-model (no price) serves: unpriced, costUsd 0.02406;
 * - `ant/house-model` alone: unpriced, no cost.
 */
import { expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const YAML = `${providersAtFake(["ant", "anthropic"])}
accounts:
  - { id: ant-1, provider: ant, api_key: env:FAKE_KEY }
combos:
  - name: mix
    targets:
      - model: ant/claude-sonnet-4-5
      - model: ant/house-model
`;

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const start = (model: string, usage: Record<string, number>) =>
  ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
const whole = (model: string) =>
  start(model, { input_tokens: 1000, output_tokens: 1 }) +
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hello" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 50 } }) +
  ev("message_stop", { type: "message_stop" });
const broken = start("claude-sonnet-4-5", { input_tokens: 2000, output_tokens: 1 });

const suite = withGatewayAndBrowser(YAML, {
  ready: async (gw) => {
    gw.fake.handle((req) => {
      if (req.stream) return req.model === "claude-sonnet-4-5" ? { sse: broken, reset_after_bytes: Buffer.byteLength(broken) } : { sse: whole(req.model!) };
      const searches = req.model === "claude-sonnet-4-5" ? { server_tool_use: { web_search_requests: 2 } } : {};
      return { json: { id: "msg_2", type: "message", role: "assistant", model: req.model, content: [{ type: "text", text: "found it" }], stop_reason: "end_turn", usage: { input_tokens: 1000, output_tokens: 500, ...searches } } };
    });
    for (const [model, stream] of [["ant/claude-sonnet-4-5", false], ["mix", true], ["ant/house-model", false]] as const) {
      const r = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream, max_tokens: 100, messages: [{ role: "user", content: "search" }] }) });
      expect(r.status).toBe(200);
      await r.text();
    }
  },
});

test("the Calls list: '· 2 web searches' after the tokens, '$0.024 + unpriced' for the partly unpriced call; the call views say both", async () => {
  const w = await suite.open();
  try {
    await w.page.setViewportSize({ width: 1400, height: 900 });
    const rows = w.page.locator("table.calls tbody tr");
    await w.page.goto(`${suite.gw.url}/dashboard/calls`);
    // the usage rows are flushed each second: wait until the page lists all three
    for (let i = 0; i < 100 && (await rows.count()) < 3; i++) {
      await Bun.sleep(200);
      if (i % 10 === 9) await w.page.reload();
    }
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => [tr.children[1]?.textContent?.trim(), tr.querySelector("[data-tokens]")?.textContent?.replace(/\s+/g, " ").trim(), tr.children[tr.children.length - 2]?.textContent?.replace(/\s+/g, " ").trim()]),
    );
    expect(cells).toEqual([
      ["ant/house-model", "1,000 / 500", "unpriced"],
      ["mix", "9,000 / 54", "$0.024 + unpriced"],
      // the column's decimals: two significant digits of its smallest amount ($0.0305 is 0.030499… as a float)
      ["ant/claude-sonnet-4-5", "1,000 / 500 · 2 web searches", "$0.030"],
    ]);
    expect(await rows.nth(1).locator("[data-partly-unpriced]").getAttribute("title")).toContain("the amount is the part that had a price");

    const dd = (name: string) => w.page.locator(".trace .kv dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");
    await rows.nth(2).click();
    await dd("Cost").waitFor({ timeout: 10_000 });
    expect(await dd("Web searches").innerText()).toBe("2 (the provider's server-side search tool, billed per search; priced into the cost)");
    expect(await dd("Cost").innerText()).toBe("$0.030 at API prices");

    await rows.nth(1).click();
    await w.page.locator(".trace .kv dd", { hasText: "partly unpriced" }).waitFor({ timeout: 10_000 });
    expect(await dd("Cost").innerText()).toBe(
      "$0.024 at API prices, partly unpriced (a model this call used, the one that served it or a failed attempt's, has no price, so its part is not counted; settings.pricing gives one)",
    );
    expect(await dd("Web searches").count()).toBe(0);

    await rows.nth(0).click();
    await w.page.locator(".trace .kv dd", { hasText: /^unpriced/ }).waitFor({ timeout: 10_000 });
    expect(await dd("Cost").innerText()).toBe("unpriced (no price is known for this model, so no cost is counted; settings.pricing gives one)");
    expect(await dd("Web searches").count()).toBe(0);
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 90_000);
