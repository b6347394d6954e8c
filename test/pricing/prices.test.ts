/**
 * Cost per request (SPEC 9.5): exact USD for input, output, cache read and cache write tokens under a
 * `settings.pricing` override and for models priced by the package; subscription kinds at their API
 * price; unknown models unpriced, never zero.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { calcPrice, findProvider } from "@pydantic/genai-prices";
import type { ProviderKind } from "../../formats/codec.ts";
import type { Usage } from "../../formats/hub.ts";
import { PriceBook, loadPriceTable, overrideCost, priceTableOnFirstUse, priceVendor, type PriceTable } from "../../src/pricing/prices.ts";

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

  test("provider/* prices every model of that provider that has no entry of its own (a local server's models)", () => {
    const b = new PriceBook(new Map([["ollama/*", { input: 1, output: 1 }], ["ollama/big", { input: 10, output: 10 }], ["shared", { input: 5, output: 5 }]]), table);
    expect(b.cost("ollama", "openai-compatible", "any-model", { inputTokens: 1_000_000 }).usd).toBeCloseTo(1, 12);
    expect(b.cost("ollama", "openai-compatible", "big", { inputTokens: 1_000_000 }).usd).toBeCloseTo(10, 12);
    expect(b.cost("ollama", "openai-compatible", "shared", { inputTokens: 1_000_000 }).usd).toBeCloseTo(5, 12);
    // another provider's model is not priced by the pattern
    expect(b.cost("vllm", "openai-compatible", "any-model", { inputTokens: 1_000_000 }).unpriced).toBe(true);
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

describe("remembered matches price exactly like the table's own lookup", () => {
  // The library's uncached call: the whole table scanned for the provider and the model.
  const direct = (vendor: string | undefined, model: string, u: Usage): number | undefined => {
    const cacheRead = u.cacheReadTokens ?? 0;
    const cacheWrite = u.cacheWriteTokens ?? 0;
    const input = (u.inputTokens ?? 0) + cacheRead + cacheWrite;
    const usageIn = {
      input_tokens: input,
      output_tokens: u.outputTokens ?? 0,
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
      ...(u.cacheWrite1hTokens ? { cache_write_1h_tokens: u.cacheWrite1hTokens } : {}),
    };
    return calcPrice(usageIn, model, vendor ? { providerId: vendor } : undefined)?.total_price;
  };
  const usages: Usage[] = [
    { inputTokens: 1000, outputTokens: 500 },
    { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000, cacheWriteTokens: 400 },
    // long-context tiers (claude-sonnet-4-5, gemini-2.5-pro: above 200k input tokens, cache included)
    { inputTokens: 150_000, outputTokens: 2000, cacheReadTokens: 60_000, cacheWriteTokens: 1000 },
    { inputTokens: 200_000, outputTokens: 1 },
    { inputTokens: 250_000, outputTokens: 8000 },
    { outputTokens: 10 },
    { cacheReadTokens: 300_000, outputTokens: 100 },
    // one-hour cache writes (Anthropic's cache_creation.ephemeral_1h_input_tokens), a part of the writes
    { inputTokens: 1000, outputTokens: 500, cacheWriteTokens: 3000, cacheWrite1hTokens: 1000 },
  ];
  const kinds: ProviderKind[] = ["anthropic", "openai", "gemini", "openai-compatible"];
  const modelIds = ["anthropic", "openai", "google"].flatMap((id) => findProvider({ providerId: id })?.models.map((m) => m.id) ?? []);

  test("the vendors' tables are there to compare (> 100 models)", () => {
    expect(modelIds.length).toBeGreaterThan(100);
  });

  test.each(kinds)("every model of the anthropic, openai and google tables, dated ids too, served by kind %s: same USD for each usage, tiers and cache tokens included", (kind) => {
    const mismatches: string[] = [];
    let priced = 0;
    {
      const vendor = priceVendor(kind);
      for (const id of modelIds) {
        for (const model of [id, `${id}-20250929`]) {
          const book = new PriceBook(new Map(), table);
          for (const u of usages) {
            const want = direct(vendor, model, u);
            const got = book.cost("p", kind, model, u);
            if (want !== undefined) priced++;
            const same = want === undefined ? got.unpriced && got.usd === undefined : !got.unpriced && got.usd === want;
            if (!same) mismatches.push(`${kind} ${model} ${JSON.stringify(u)}: table ${want}, book ${got.usd}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(priced).toBeGreaterThan(100);
  });

  test("claude-sonnet-4-5 one-hour cache writes at $6 per million, the other writes at $3.75: 2000 × 3.75 + 1000 × 6 per million = $0.0135", () => {
    const book = new PriceBook(new Map(), table);
    expect(book.cost("a", "anthropic", "claude-sonnet-4-5", { cacheWriteTokens: 3000, cacheWrite1hTokens: 1000 }).usd).toBeCloseTo(0.0135, 12);
    expect(book.cost("a", "anthropic", "claude-sonnet-4-5", { cacheWriteTokens: 3000 }).usd).toBeCloseTo(0.01125, 12);
  });

  test("claude-sonnet-4-5 above 200k input tokens at its long-context prices, from the remembered match: $6 in, $22.5 out, $0.60 cache read, $7.50 cache write", () => {
    const book = new PriceBook(new Map(), table);
    expect(book.cost("a", "anthropic", "claude-sonnet-4-5", usage).usd).toBeCloseTo(0.0126, 12);
    const long = { inputTokens: 150_000, outputTokens: 2000, cacheReadTokens: 60_000, cacheWriteTokens: 1000 };
    expect(book.cost("a", "anthropic", "claude-sonnet-4-5", long).usd).toBeCloseTo((150_000 * 6 + 2000 * 22.5 + 60_000 * 0.6 + 1000 * 7.5) / 1e6, 12);
  });
});

describe("the gateway's price table, loaded on the first cost (priceTableOnFirstUse)", () => {
  test("loads the package only when the first cost is computed", () => {
    const script = `
      import { priceTableOnFirstUse } from ${JSON.stringify(`${import.meta.dir}/../../src/pricing/prices.ts`)};
      const loaded = () => Object.keys(require.cache).some((k) => k.includes("genai-prices"));
      const table = priceTableOnFirstUse();
      const before = loaded();
      const usd = table({ input_tokens: 100_000, output_tokens: 0 }, "claude-sonnet-4-5", { providerId: "anthropic" })?.total_price;
      console.log(JSON.stringify({ before, after: loaded(), usd }));`;
    const r = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(r.stderr.toString()).toBe("");
    expect(JSON.parse(r.stdout.toString())).toEqual({ before: false, after: true, usd: 0.3 });
  });

  test("a table that cannot be loaded: the request is unpriced, not a crash, the load is tried and the reason reported once", () => {
    const reports: unknown[] = [];
    let loads = 0;
    const broken = priceTableOnFirstUse(
      () => {
        loads++;
        throw new Error("Cannot find package '@pydantic/genai-prices'");
      },
      (e) => reports.push(e),
    );
    const book = new PriceBook(new Map(), broken);
    expect(book.cost("anthropic", "anthropic", "claude-sonnet-4-5", usage)).toEqual({ unpriced: true });
    expect(book.cost("openai", "openai", "gpt-5", usage)).toEqual({ unpriced: true });
    expect(reports.map((e) => (e as Error).message)).toEqual(["Cannot find package '@pydantic/genai-prices'"]);
    expect(loads).toBe(1);
  });

  test("every model of the anthropic, openai and google tables, with each vendor and none: the same result as the package's calcPrice", () => {
    const lazy = priceTableOnFirstUse();
    const ids = ["anthropic", "openai", "google"].flatMap((id) => findProvider({ providerId: id })?.models.map((m) => m.id) ?? []);
    const usages = [
      { input_tokens: 1000, output_tokens: 500 },
      { input_tokens: 3400, output_tokens: 500, cache_read_tokens: 2000, cache_write_tokens: 400 },
      { input_tokens: 250_000, output_tokens: 8000, cache_read_tokens: 60_000 },
    ];
    const mismatches: string[] = [];
    let priced = 0;
    for (const model of ids)
      for (const providerId of ["anthropic", "openai", "google", undefined])
        for (const u of usages) {
          const options = providerId ? { providerId } : undefined;
          const want = calcPrice(u, model, options);
          const got = lazy(u, model, options);
          if (want) priced++;
          if (got?.total_price !== want?.total_price || got?.provider.id !== want?.provider.id || got?.model.id !== want?.model.id) mismatches.push(`${providerId} ${model} ${JSON.stringify(u)}: ${want?.total_price} vs ${got?.total_price}`);
        }
    expect(mismatches).toEqual([]);
    expect(priced).toBeGreaterThan(300);
  });
});

describe("what a token may cost, for a USD budget's requests in flight (SPEC 9.6)", () => {
  test("the dearer of input and output: $2.2 per million for glm-5.3's override, Claude Sonnet 4.5's table output price; unpriced is undefined", () => {
    const b = new PriceBook(new Map([["glm/glm-5.3", { input: 0.6, output: 2.2 }]]), table);
    expect(b.usdPerTokenAtMost("glm", "anthropic-compatible", "glm-5.3")).toBeCloseTo(2.2e-6, 15);
    const sonnet = b.cost("anthropic", "anthropic", "claude-sonnet-4-5", { outputTokens: 1_000_000 }).usd!;
    expect(sonnet).toBeGreaterThan(b.cost("anthropic", "anthropic", "claude-sonnet-4-5", { inputTokens: 1_000 }).usd! * 1000);
    expect(b.usdPerTokenAtMost("anthropic", "anthropic", "claude-sonnet-4-5")).toBeCloseTo(sonnet / 1_000_000, 15);
    expect(b.usdPerTokenAtMost("ollama", "openai-compatible", "no-such-model-here")).toBeUndefined();
  });
});
