/**
 * A priced model's resolved rates (src/pricing/rate-plan.ts, docs/performance.md item 96): a request
 * priced from them costs exactly what the package's `calcPrice` says, to the last bit, for every model
 * of the table, every token mix (tiers, cache reads and writes, one-hour writes), every dated price set
 * at its switch, and a usage the package refuses is still refused; a changed `settings.pricing` is
 * never answered from what was remembered under the old one.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { calcPrice, waitForUpdate, type ModelInfo, type Provider } from "@pydantic/genai-prices";
import type { ProviderKind } from "../../formats/codec.ts";
import type { Usage } from "../../formats/hub.ts";
import { seededRng } from "../../pipeline/order.ts";
import { RequestAccounting } from "../../src/limits/accounting.ts";
import { PriceBook, priceOfReportedTokens, priceVendor, type PriceOverride, type PriceTable } from "../../src/pricing/prices.ts";
import { planCost, ratePlan } from "../../src/pricing/rate-plan.ts";

let providers: Provider[];
beforeAll(async () => {
  providers = (await waitForUpdate()) ?? [];
});

/** Every tier start of the table: the mixes put the input tokens on, just below and just above each. */
function tierStarts(ps: Provider[]): number[] {
  const starts = new Set<number>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === "object") {
      const o = x as Record<string, unknown>;
      if (Array.isArray(o.tiers)) for (const t of o.tiers as { start: number }[]) starts.add(t.start);
      Object.values(o).forEach(walk);
    }
  };
  for (const p of ps) for (const m of p.models) walk(m.prices);
  return [...starts].sort((a, b) => a - b);
}

/** Token mixes: random sizes of every class (some absent, some zero, one-hour writes above the writes too, web searches), and the tier edges. */
function mixes(n: number, seed: number, starts: number[]): Usage[] {
  const r = seededRng(seed);
  const size = () => {
    const k = r();
    return k < 0.15 ? 0 : k < 0.55 ? Math.floor(r() * 5_000) : k < 0.85 ? Math.floor(r() * 400_000) : Math.floor(r() * 3_000_000);
  };
  const maybe = (p: number) => (r() < p ? size() : undefined);
  const out: Usage[] = [];
  for (let i = 0; i < n; i++) {
    const u: Usage = {};
    const input = maybe(0.9);
    if (input !== undefined) u.inputTokens = input;
    const output = maybe(0.9);
    if (output !== undefined) u.outputTokens = output;
    const read = maybe(0.5);
    if (read !== undefined) u.cacheReadTokens = read;
    const write = maybe(0.5);
    if (write !== undefined) u.cacheWriteTokens = write;
    if (r() < 0.3) u.cacheWrite1hTokens = r() < 0.8 ? Math.floor((write ?? 0) * r()) : size();
    if (r() < 0.3) u.webSearches = Math.floor(r() * 30);
    out.push(u);
  }
  for (const s of starts)
    for (const total of [s - 1, s, s + 1]) {
      if (total < 0) continue;
      const read = Math.floor(total / 3);
      const write = Math.floor(total / 5);
      out.push({ inputTokens: total - read - write, outputTokens: 1000, cacheReadTokens: read, cacheWriteTokens: write, cacheWrite1hTokens: Math.floor(write / 2) });
      out.push({ inputTokens: total, outputTokens: 7 });
    }
  return out;
}

/** The usage the package is given for `u` (as PriceBook gives it). */
function tableUsage(u: Usage): Record<string, number> {
  const read = u.cacheReadTokens ?? 0;
  const write = u.cacheWriteTokens ?? 0;
  return {
    input_tokens: (u.inputTokens ?? 0) + read + write,
    output_tokens: u.outputTokens ?? 0,
    cache_read_tokens: read,
    cache_write_tokens: write,
    ...(u.cacheWrite1hTokens ? { cache_write_1h_tokens: Math.min(u.cacheWrite1hTokens, write) } : {}),
    ...(u.webSearches ? { web_searches: u.webSearches } : {}),
  };
}

/** The package's answer for `u` (USD, or undefined when unpriced or refused). */
function table(u: Usage, model: string, options: Parameters<typeof calcPrice>[2]): number | undefined {
  try {
    return calcPrice(tableUsage(u), model, options)?.total_price;
  } catch {
    return undefined;
  }
}

/**
 * What src/pricing/prices.ts PriceBook.cost asks of the package for a `*-compatible` kind's `id`: the
 * OpenRouter entry's price when the provider is at OpenRouter's URL, else (or when it has none) a
 * `vendor/model` id's price under the vendor, else the id alone's.
 */
function compatiblePrice(u: Usage, id: string, atOpenRouter: boolean, ms: number): number | undefined {
  const timestamp = new Date(ms);
  const openRouter = atOpenRouter ? table(u, id, { providerId: "openrouter", timestamp }) : undefined;
  if (openRouter !== undefined) return openRouter;
  const slash = id.indexOf("/");
  return (slash > 0 && slash < id.length - 1 ? table(u, id.slice(slash + 1), { providerId: id.slice(0, slash), timestamp }) : undefined) ?? table(u, id, { timestamp });
}

const hasTimeOfDay = (m: ModelInfo) => Array.isArray(m.prices) && m.prices.some((c) => c.constraint?.type === "time_of_date");
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const at = (ms: number) => () => ms;

describe("a model's resolved rates price exactly like calcPrice", () => {
  // Fixed work: every model of the table (~1,700) priced by calcPrice for each mix (> 50,000 calls of
  // ~100 us under load): 10.3 and 16.3 s of the suite's 20 s per-test timeout in two full runs at load
  // 15-22, so it has its own.
  test("every model of every provider of the table, its own prices: the same USD to the last bit for 60 random mixes and every tier edge", () => {
    const starts = tierStarts(providers);
    expect(starts.length).toBeGreaterThan(2);
    const us = mixes(60, 17, starts);
    const mismatches: string[] = [];
    let models = 0;
    let planned = 0;
    let compared = 0;
    for (const p of providers)
      for (const m of p.models) {
        models++;
        const reported = priceOfReportedTokens(m);
        const plan = ratePlan(reported, NOW);
        if (!plan) {
          if (!hasTimeOfDay(m)) mismatches.push(`${p.id}/${m.id}: no plan`);
          continue;
        }
        planned++;
        const provider = { ...p, models: [m], fallback_model_providers: undefined };
        for (const u of us) {
          const want = table(u, m.id, { provider, timestamp: new Date(NOW) });
          if (want === undefined) continue;
          const read = u.cacheReadTokens ?? 0;
          const write = u.cacheWriteTokens ?? 0;
          const w1h = u.cacheWrite1hTokens ? Math.min(u.cacheWrite1hTokens, write) : 0;
          const got = planCost(plan, (u.inputTokens ?? 0) + read + write, u.outputTokens ?? 0, read, write, w1h, at(NOW), u.webSearches ?? 0);
          compared++;
          if (!Object.is(got, want)) mismatches.push(`${p.id}/${m.id} ${JSON.stringify(u)}: calcPrice ${want}, plan ${got}`);
        }
      }
    expect(mismatches.slice(0, 20)).toEqual([]);
    expect(models).toBeGreaterThan(1000);
    expect(planned).toBeGreaterThan(models - 20);
    expect(compared).toBeGreaterThan(50_000);
  }, 90_000);

  test.each<ProviderKind>(["anthropic", "openai", "gemini", "openai-compatible"])(
    "PriceBook, kind %s, every model of the anthropic, openai and google tables: the same USD as calcPrice, and calcPrice asked once per model",
    (kind) => {
      const vendor = priceVendor(kind);
      const ids = ["anthropic", "openai", "google"].flatMap((id) => providers.find((p) => p.id === id)?.models.map((m) => m.id) ?? []);
      const us = mixes(40, 5, tierStarts(providers));
      let calls = 0;
      const counting: PriceTable = (u, m, o) => {
        calls++;
        return calcPrice(u, m, o);
      };
      const mismatches: string[] = [];
      let priced = 0;
      for (const model of ids) {
        const book = new PriceBook(new Map(), counting, at(NOW));
        calls = 0;
        for (const u of us) {
          const want = table(u, model, vendor ? { providerId: vendor, timestamp: new Date(NOW) } : { timestamp: new Date(NOW) });
          const got = book.cost("p", kind, model, u);
          if (want !== undefined) priced++;
          const same = want === undefined ? got.unpriced && got.usd === undefined : !got.unpriced && Object.is(got.usd, want);
          if (!same) mismatches.push(`${kind} ${model} ${JSON.stringify(u)}: calcPrice ${want}, book ${got.usd}`);
        }
        // A priced model (not one with time-of-day prices) is looked up once; every later request uses its rates.
        if (!book.cost("p", kind, model, { inputTokens: 1 }).unpriced) expect(`${model}: ${calls} calls`).toBe(`${model}: 1 calls`);
      }
      expect(mismatches.slice(0, 20)).toEqual([]);
      expect(priced).toBeGreaterThan(1000);
    },
  );

  test("dated price sets: at each switch the book prices with the set in force, forward and back in time", () => {
    const u: Usage = { inputTokens: 90_000, outputTokens: 4000, cacheReadTokens: 120_000, cacheWriteTokens: 6000, cacheWrite1hTokens: 2000 };
    let switches = 0;
    let changed = 0;
    const mismatches: string[] = [];
    for (const p of providers)
      for (const m of p.models) {
        if (!Array.isArray(m.prices) || hasTimeOfDay(m)) continue;
        const kind: ProviderKind = p.id === "anthropic" ? "anthropic" : p.id === "openai" ? "openai" : p.id === "google" ? "gemini" : "openai-compatible";
        const vendor = priceVendor(kind);
        const opts = (ms: number) => ({ ...(vendor ? { providerId: vendor } : {}), timestamp: new Date(ms) });
        // A compatible kind is priced as PriceBook.cost looks it up: OpenRouter's models at OpenRouter's URL.
        const baseUrl = p.id === "openrouter" ? "https://openrouter.ai/api/v1" : undefined;
        const want = (t: number) => (vendor ? table(u, m.id, opts(t)) : compatiblePrice(u, m.id, baseUrl !== undefined, t));
        for (const c of m.prices) {
          if (c.constraint?.type !== "start_date") continue;
          const d = Date.parse(c.constraint.start_date);
          switches++;
          let clock = d - 1;
          const book = new PriceBook(new Map(), calcPrice, () => clock);
          for (const t of [d - 1, d - 1, d, d, d + 86_400_000, d - 1, d]) {
            clock = t;
            const got = book.cost("p", kind, m.id, u, baseUrl).usd;
            if (!Object.is(got, want(t))) mismatches.push(`${p.id}/${m.id} at ${new Date(t).toISOString()}: calcPrice ${want(t)}, book ${got}`);
          }
          if (want(d - 1) !== want(d)) changed++;
        }
      }
    expect(mismatches).toEqual([]);
    expect(switches).toBeGreaterThan(10);
    // The switches change the price for most models: a plan kept past one would be seen.
    expect(changed).toBeGreaterThan(5);
  });

  test("time-of-day prices are asked of calcPrice at every request, at every hour", () => {
    const u: Usage = { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 2000 };
    const mismatches: string[] = [];
    let models = 0;
    for (const p of providers)
      for (const m of p.models) {
        if (!hasTimeOfDay(m)) continue;
        models++;
        let clock = NOW;
        const book = new PriceBook(new Map(), calcPrice, () => clock);
        for (let h = 0; h < 48; h++) {
          clock = NOW + h * 1_800_000;
          const want = table(u, m.id, { timestamp: new Date(clock) });
          const got = book.cost("p", "openai-compatible", m.id, u).usd;
          if (!Object.is(got, want)) mismatches.push(`${m.id} at ${new Date(clock).toISOString()}: calcPrice ${want}, book ${got}`);
        }
      }
    expect(models).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);
  });

  test("a usage the package refuses (negative, not a number, infinite) is refused after the rates are known too, and fractional counts price alike", () => {
    for (const bad of [{ inputTokens: -5, outputTokens: 1 }, { outputTokens: Number.NaN, inputTokens: 1 }, { cacheReadTokens: Infinity }, { cacheWrite1hTokens: -3, cacheWriteTokens: 10 }] as Usage[]) {
      const book = new PriceBook(new Map(), calcPrice, at(NOW));
      expect(book.cost("a", "anthropic", "claude-sonnet-4-5", { inputTokens: 10, outputTokens: 10 }).unpriced).toBe(false);
      expect({ bad, cost: book.cost("a", "anthropic", "claude-sonnet-4-5", bad) }).toEqual({ bad, cost: table(bad, "claude-sonnet-4-5", { providerId: "anthropic" }) === undefined ? { unpriced: true } : expect.anything() });
    }
    const book = new PriceBook(new Map(), calcPrice, at(NOW));
    book.cost("g", "gemini", "gemini-2.5-pro", { inputTokens: 1 });
    const frac: Usage = { inputTokens: 1000.5, outputTokens: 0.25, cacheReadTokens: 199_999.75 };
    expect(book.cost("g", "gemini", "gemini-2.5-pro", frac).usd).toBe(table(frac, "gemini-2.5-pro", { providerId: "google", timestamp: new Date(NOW) })!);
  });
});

describe("a changed settings.pricing is never answered from the old one's rates", () => {
  test("table price, then an override of the same model, then the override removed: each request priced by the pricing in force", () => {
    let pricing: ReadonlyMap<string, PriceOverride> = new Map();
    const accounting = new RequestAccounting({ pricing: () => pricing, priceTable: calcPrice, counters: {} as never });
    const u: Usage = { inputTokens: 100_000, outputTokens: 100_000 };
    const tablePrice = table(u, "claude-sonnet-4-5", { providerId: "anthropic" })!;
    expect(tablePrice).toBeCloseTo(1.8, 12); // $3 in, $15 out per million
    expect(accounting.prices().cost("anthropic", "anthropic", "claude-sonnet-4-5", u)).toEqual({ usd: tablePrice, source: "price_table", unpriced: false });
    expect(accounting.prices().cost("anthropic", "anthropic", "claude-sonnet-4-5", u).usd).toBe(tablePrice);
    pricing = new Map([["anthropic/claude-sonnet-4-5", { input: 1, output: 2 }]]);
    expect(accounting.prices().cost("anthropic", "anthropic", "claude-sonnet-4-5", u)).toEqual({ usd: expect.closeTo(0.3, 12), source: "override", unpriced: false });
    pricing = new Map([["claude-sonnet-4-5", { input: 0.5, output: 0.5 }]]);
    expect(accounting.prices().cost("anthropic", "anthropic", "claude-sonnet-4-5", u).usd).toBeCloseTo(0.1, 12);
    pricing = new Map();
    expect(accounting.prices().cost("anthropic", "anthropic", "claude-sonnet-4-5", u)).toEqual({ usd: tablePrice, source: "price_table", unpriced: false });
  });
});
