/**
 * REPORT ONLY (cost46 tryout; fails now): a provider of kind `openai-compatible` serving OpenRouter's
 * vendor-prefixed model ids (`anthropic/claude-sonnet-4.5`, `openai/gpt-5`, `google/gemini-2.5-pro`)
 * records every request `unpriced`, though @pydantic/genai-prices 0.1.8 (the price package) prices
 * those very ids under its `openrouter` provider (calcPrice(usage, "anthropic/claude-sonnet-4.5",
 * {providerId: "openrouter"}) or {providerApiUrl: "https://openrouter.ai/api/v1"} → 0.012225 for the
 * usage below). src/pricing/prices.ts looks a `*-compatible` kind up "by model id alone"
 * (priceVendor → undefined), and the package matches no provider for a prefixed id without one.
 *
 * What a user would notice: with OpenRouter configured as README's "Configuration" shows for
 * compatible providers, `switchyard usage` and the dashboard read "unpriced" for every request, and a
 * key's USD budget counts none of them ("N requests of unpriced models not counted"), unless each model
 * gets a `settings.pricing` entry by hand; SPEC 9.5 says the cost comes from the maintained price table.
 *
 * Expected: `anthropic/claude-sonnet-4.5` with usage 3300 prompt tokens (2000 cached read, 300 cache
 * write), 500 completion → costUsd 0.012225 (1000 × $3 + 2000 × $0.30 + 300 × $3.75 + 500 × $15 per
 * million), as the table's OpenRouter entry says; `openai/gpt-5` → 0.006875. Actual: no costUsd,
 * `unpriced: true`. (The test's provider is the local fake, so a fix that matches by base URL, the
 * package's `providerApiUrl`, would need its own test with OpenRouter's URL; a fix that reads the
 * vendor prefix, or asks the table's `openrouter` provider for a prefixed id, passes this one.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
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
