/**
 * Cost per request (SPEC 9.5): exact USD for input, output, cache read and cache write tokens under a
 * `settings.pricing` override and for models priced by the package; subscription kinds at their API
 * price; unknown models unpriced, never zero.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { PriceBook, loadPriceTable, overrideCost, priceVendor, type PriceTable } from "../../src/pricing/prices.ts";

let table: PriceTable;
beforeAll(async () => {
  table = await loadPriceTable();
});

// inputTokens excludes cache reads and writes (formats/hub.ts Usage).
const usage = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 400 };

describe("settings.pricing overrides", () => {
  const book = () => new PriceBook(new Map([["glm/glm-5.3", { input: 0.6, output: 2.2, cacheRead: 0.11, cacheWrite: 0.75 }]]), table);

  test("each token class at its own price: 1000×0.6 + 500×2.2 + 2000×0.11 + 400×0.75 per million = $0.00222", () => {
    const c = book().cost("glm", "anthropic-compatible", "glm-5.3", usage);
    expect(c.source).toBe("override");
    expect(c.unpriced).toBe(false);
    expect(c.usd).toBeCloseTo(0.00222, 12);
  });

  test("an override wins over the package's price for the same model", () => {
    const b = new PriceBook(new Map([["anthropic/claude-sonnet-4-5", { input: 1, output: 1 }]]), table);
    expect(b.cost("anthropic", "anthropic", "claude-sonnet-4-5", { inputTokens: 1_000_000 }).usd).toBeCloseTo(1, 12);
  });

  test("a bare model id override applies to every provider serving it", () => {
    const b = new PriceBook(new Map([["my-model", { input: 2, output: 4 }]]));
    expect(b.cost("ollama", "openai-compatible", "my-model", { inputTokens: 500_000, outputTokens: 250_000 }).usd).toBeCloseTo(2, 12);
  });

  test("missing cache prices fall back to the override's input price", () => {
    expect(overrideCost({ input: 1, output: 3 }, { cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 })).toBeCloseTo(2, 12);
  });
});

describe("the price table (@pydantic/genai-prices)", () => {
  let book: PriceBook;
  beforeAll(() => {
    book = new PriceBook(new Map(), table);
  });

  test("without the table loaded only overrides price: a table model is unpriced", () => {
    expect(new PriceBook().cost("anthropic", "anthropic", "claude-sonnet-4-5", usage)).toEqual({ unpriced: true });
  });

  test("anthropic claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million = $0.0126", () => {
    const c = book.cost("anthropic", "anthropic", "claude-sonnet-4-5", usage);
    expect(c).toEqual({ usd: expect.any(Number), source: "price_table", unpriced: false });
    expect(c.usd).toBeCloseTo(0.0126, 12);
  });

  test("a Claude Code subscription shows the API-price equivalent of the same model", () => {
    expect(book.cost("cc", "claude-code", "claude-sonnet-4-5", usage).usd).toBeCloseTo(0.0126, 12);
  });

  test("a Codex subscription is priced as the OpenAI API model: gpt-5-codex $1.25 in, $10 out, $0.125 cache read = $0.0065", () => {
    const c = book.cost("cx", "codex", "gpt-5-codex", { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000 });
    expect(c.usd).toBeCloseTo(0.0065, 12);
  });

  test("a model nobody prices is unpriced (no usd), not free", () => {
    expect(book.cost("lab", "openai-compatible", "house-model-7b", usage)).toEqual({ unpriced: true });
    // remembered, and still unpriced the second time
    expect(book.cost("lab", "openai-compatible", "house-model-7b", usage)).toEqual({ unpriced: true });
  });

  test("vendors: subscription kinds map to their API vendor; compatible kinds match by model id", () => {
    expect(priceVendor("claude-code")).toBe("anthropic");
    expect(priceVendor("codex")).toBe("openai");
    expect(priceVendor("gemini")).toBe("google");
    expect(priceVendor("openai-compatible")).toBeUndefined();
  });
});
