/**
 * Round token figures without their zeros (dash16's tryout of the dashboard): a key's token budget of
 * 100,000 read "100.0k tokens" on the Keys page (and its tpm of 100,000 "100.0k tpm"), where the charts
 * write "100k". In a real Chromium: a key with a 100,000-token daily budget and a tpm of 100,000 that
 * served one request of 10,000 tokens reads "10k tokens of 100k tokens" in its budget, "100k tpm" in
 * its limits and "10k of 100k tokens" (or 0 once the minute turned) in this minute's use; the
 * Overview's Tokens tile for those 10,000 tokens reads "10k".
 */
import { expect, test } from "bun:test";
import { demoConfigYaml } from "../../scripts/lib/demo-config.ts";
import { withGatewayAndBrowser } from "../support/with-gateway-and-browser.ts";

const suite = withGatewayAndBrowser(demoConfigYaml("{{FAKE}}"), {
  ready: async (gw) => {
    // 10,000 tokens in all: 9,000 input, 1,000 output
    gw.fake.handle((req) =>
      req.format === "anthropic-messages"
        ? {
            json: {
              id: "msg_round01",
              type: "message",
              role: "assistant",
              model: req.model,
              content: [{ type: "text", text: "round" }],
              stop_reason: "end_turn",
              stop_sequence: null,
              usage: { input_tokens: 9000, output_tokens: 1000 },
            },
          }
        : undefined,
    );
  },
});

test("a key's 100,000-token budget and tpm read 100k on the Keys page; 10,000 tokens read 10k on the Overview", async () => {
  const made = await fetch(`${suite.gw.url}/admin/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "round", limits: { tpm: 100_000, budgets: [{ window: "1d", tokens: 100_000 }] } }),
  });
  expect(made.status).toBe(201);
  const { secret } = (await made.json()) as { secret: string };
  const r = await fetch(`${suite.gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": secret },
    body: JSON.stringify({ model: "demo-anthropic/claude-demo", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(200);
  await r.text();
  for (const end = Date.now() + 10_000; ; await Bun.sleep(50)) {
    const keys = (await (await fetch(`${suite.gw.url}/admin/api/keys`)).json()) as { keys: { name: string; use?: { budgets: { used: number }[] } }[] };
    if (keys.keys.find((k) => k.name === "round")?.use?.budgets[0]?.used === 10_000) break;
    if (Date.now() > end) throw new Error("the key's budget did not count the request's 10,000 tokens within 10 s");
  }

  const w = await suite.open();
  try {
    await w.page.goto(`${suite.gw.url}/dashboard/keys`);
    const row = w.page.locator('tr[data-key="round"]');
    const budget = row.locator(".budget .quota-head");
    await budget.waitFor({ timeout: 10_000 });
    const limits = row.locator('td[data-label="Limits"]');
    // this minute's use: the request's 10,000 tokens, or 0 once the minute turned
    const minute = limits.locator('[data-minute="tokens"]');
    expect({ budget: await budget.innerText(), limits: (await limits.innerText()).split("\n")[0], minute: /^(10k|0) of 100k tokens$/.test(await minute.innerText()) || (await minute.innerText()) }).toEqual({
      budget: "1d\n10k tokens of 100k tokens",
      limits: "100k tpm",
      minute: true,
    });

    await w.page.goto(`${suite.gw.url}/dashboard/`);
    const tile = w.page.locator(".stat", { has: w.page.locator(".stat-label", { hasText: /^Tokens$/ }) });
    await tile.locator(".stat-value", { hasText: /\d/ }).waitFor({ timeout: 10_000 });
    expect(await tile.locator(".stat-value").innerText()).toBe("10k");
    expect(w.errors).toEqual([]);
  } finally {
    await w.close();
  }
}, 60_000);
