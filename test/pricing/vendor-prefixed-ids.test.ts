/**
 * A provider of kind `openai-compatible` serving OpenRouter's vendor-prefixed model ids
 * (`anthropic/claude-sonnet-4.5`, `openai/gpt-5`, `google/gemini-2.5-pro`) recorded every request
 * `unpriced` until 2026-12-07: src/pricing/prices.ts looked a `*-compatible` kind up by model id alone,
 * and @pydantic/genai-prices 0.1.8 (the price package) matches no provider for a prefixed id without
 * one. A key's USD budget counted none of them ("N requests of unpriced models not counted") unless
 * each model got a `settings.pricing` entry by hand; SPEC 9.5 says the cost comes from the maintained
 * price table.
 *
 * Now a `vendor/model` id is priced as `model` under the vendor's own table when the package knows the
 * vendor, and by the table's OpenRouter entry when the provider's base URL is openrouter.ai (OpenRouter's
 * prices are its own: deepseek/deepseek-chat costs 0.001699 there and 0.001041 at DeepSeek for the
 * usage below, 0.0005205 in DeepSeek's off-peak hours, 16:30–00:30 UTC).
 *
 * Usage: 3300 prompt tokens (2000 cached read, 300 cache write), 500 completion →
 * `anthropic/claude-sonnet-4.5` 0.012225 (1000 × $3 + 2000 × $0.30 + 300 × $3.75 + 500 × $15 per
 * million), `openai/gpt-5` 0.006875. (The gateway tests' provider is the local fake, so the base URL
 * rule is tested on the price book and the accounting.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { RequestAccounting } from "../../src/limits/accounting.ts";
import { loadPriceTable, PriceBook } from "../../src/pricing/prices.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${providersAtFake(["or", "openai-compatible"])}
accounts:
  - { id: or-1, provider: or, api_key: env:FAKE_KEY }
`);
  gw.fake.handle((req) => ({
    json: {
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: req.model,
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } }],
      usage: { prompt_tokens: 3300, completion_tokens: 500, total_tokens: 3800, prompt_tokens_details: { cached_tokens: 2000, cache_write_tokens: 300 } },
    },
  }));
});
afterAll(async () => {
  await gw?.stop();
});

for (const [model, usd] of [
  ["anthropic/claude-sonnet-4.5", 0.012225],
  ["openai/gpt-5", 0.006875],
] as const) {
  test(`or/${model}: priced from the table's OpenRouter entry, ${usd} USD, not unpriced`, async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: `or/${model}`, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(200);
    await r.text();
    let call: { model?: string; costUsd?: number; unpriced?: boolean } | undefined;
    for (const end = Date.now() + 5000; call?.model !== model && Date.now() < end; await Bun.sleep(50)) {
      call = ((await (await fetch(`${gw.url}/admin/api/calls?limit=1`)).json()) as { calls: (typeof call)[] }).calls[0];
    }
    expect({ model: call?.model, costUsd: call?.costUsd, unpriced: call?.unpriced }).toEqual({ model, costUsd: usd, unpriced: undefined });
  });
}

describe("an openai-compatible provider at OpenRouter's URL", () => {
  // The usage above: 3300 prompt tokens (2000 cached read, 300 cache write), 500 completion.
  const usage = { inputTokens: 1000, cacheReadTokens: 2000, cacheWriteTokens: 300, outputTokens: 500 };
  const OPENROUTER = "https://openrouter.ai/api/v1";

  test("prices a vendor/model id by OpenRouter's own entry; elsewhere by the vendor's (DeepSeek's prices differ)", async () => {
    // 12:00 UTC: DeepSeek's off-peak prices (16:30–00:30 UTC) are half; on the wall clock this test failed
    // from 00:30 to 16:30 (CI of 2026-12-08).
    const book = new PriceBook(new Map(), await loadPriceTable(), () => Date.parse("2026-12-07T12:00:00Z"));
    // OpenRouter's deepseek/deepseek-chat, and DeepSeek's deepseek-chat (@pydantic/genai-prices 0.1.8)
    expect(book.cost("or", "openai-compatible", "deepseek/deepseek-chat", usage, OPENROUTER).usd).toBeCloseTo(0.001699, 12);
    expect(book.cost("ds", "openai-compatible", "deepseek/deepseek-chat", usage, "https://api.together.xyz/v1").usd).toBeCloseTo(0.001041, 12);
    expect(book.cost("ds", "openai-compatible", "deepseek/deepseek-chat", usage).usd).toBeCloseTo(0.001041, 12);
    // a subdomain of openrouter.ai is OpenRouter's too; a host merely containing the name is not
    expect(book.cost("or", "openai-compatible", "deepseek/deepseek-chat", usage, "https://eu.openrouter.ai/api/v1").usd).toBeCloseTo(0.001699, 12);
    expect(book.cost("x", "openai-compatible", "deepseek/deepseek-chat", usage, "https://openrouter.ai.example.com/v1").usd).toBeCloseTo(0.001041, 12);
    // an id OpenRouter's entry lacks falls back to the vendor's table; an unknown vendor to the id alone
    expect(book.cost("or", "openai-compatible", "unknown-vendor/unknown-model", usage, OPENROUTER)).toEqual({ unpriced: true });
  });

  test("a request served there is costed from OpenRouter's entry (the served provider's base URL reaches the price lookup)", async () => {
    const accounting = new RequestAccounting({ pricing: () => new Map(), priceTable: await loadPriceTable(), counters: {} as never });
    const rec = { usage: { ...usage }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
    accounting.finish({ endpoint: "chat" } as unknown as RequestContext, rec, { provider: { id: "or", kind: "openai-compatible", baseUrl: OPENROUTER }, model: "deepseek/deepseek-chat" }, Date.now());
    expect({ costUsd: rec.costUsd, unpriced: rec.unpriced }).toEqual({ costUsd: 0.001699, unpriced: undefined });
    expect(accounting.expectedUsdPerToken("or", "openai-compatible", "anthropic/claude-sonnet-4.5", OPENROUTER)).toBeCloseTo(15 / 1_000_000, 15);
  });
});
