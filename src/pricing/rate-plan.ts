/**
 * A priced model's rates, resolved once (issue 17, docs/performance.md item 96): `calcPrice` of
 * @pydantic/genai-prices re-reads the model's price entry on every call (normalises the provider,
 * picks the dated price set, checks and parses each price, builds the usage-unit tree) before it
 * multiplies tokens by prices. A {@link RatePlan} is that work done once for one model: the price set
 * in force, its prices of the token classes the gateway reports, in the entry's order. {@link planCost}
 * then does only the multiplication, with the same arithmetic in the same order as the package's, so
 * its USD is the package's to the last bit (test/pricing/rate-plan.test.ts).
 *
 * What the package's result depends on besides the usage, and how the plan keys on it:
 * - the time (dated price sets, `start_date` constraints): the plan holds the interval of time in which
 *   the same set is in force (between two of the entry's start dates) and answers nothing outside it;
 *   a model with time-of-day prices gets no plan;
 * - tiers (prices that change above a number of input tokens): chosen per request from the request's
 *   input tokens (cache included), as the package chooses them;
 * - the usage-unit tree: an input price with cache prices leaves the cache tokens to those (the
 *   package's "leaf" values), a one-hour write price takes those writes from the writes.
 * Source of the rules: the package's `calcPrice` (dist/index.js: `we`, `he`, `ne`, `le`, `de`, `_e`),
 * version 0.1.8. Anything the plan is not sure of (an invalid usage value, a price it cannot read) is
 * answered `undefined`, and the caller asks `calcPrice`.
 */
import type { ModelInfo, ModelPrice } from "@pydantic/genai-prices";

/** A tiered price, its tiers sorted by start as the package sorts them. */
interface Tiered {
  base: number;
  tiers: { start: number; price: number }[];
}

/** The usage values a plan prices: the package's usage keys of the token classes the gateway reports. */
const enum Slot {
  Input,
  Output,
  CacheRead,
  CacheWrite,
  CacheWrite1h,
  Requests,
  WebSearches,
}

/** Where a term is summed in the package (`input_price`, `output_price`, other): the total adds them in that order. */
const enum Bucket {
  Input,
  Output,
  Other,
}

/** One price of the set: which usage value, its price (USD per `per` units), and its bucket. */
interface Rate {
  slot: Slot;
  price: number | Tiered;
  per: number;
  bucket: Bucket;
}

/** The resolved rates of one model (see the module comment). `from`/`until`: ms since the epoch, the set's interval (`until` excluded). */
export interface RatePlan {
  readonly rates: readonly Rate[];
  readonly tiered: boolean;
  readonly read: boolean;
  readonly write: boolean;
  readonly write1h: boolean;
  readonly from: number;
  readonly until: number;
}

/** The price keys of the reported classes (prices.ts `REPORTED_PRICE_KEYS`) → slot, units per price, bucket (the package's unit table). */
const KEYS: Record<string, [Slot, number, Bucket]> = {
  input_mtok: [Slot.Input, 1e6, Bucket.Input],
  output_mtok: [Slot.Output, 1e6, Bucket.Output],
  cache_read_mtok: [Slot.CacheRead, 1e6, Bucket.Input],
  cache_write_mtok: [Slot.CacheWrite, 1e6, Bucket.Input],
  cache_write_1h_mtok: [Slot.CacheWrite1h, 1e6, Bucket.Input],
  requests_kcount: [Slot.Requests, 1e3, Bucket.Other],
  web_searches_kcount: [Slot.WebSearches, 1e3, Bucket.Other],
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The package's check of one price (`le`): a finite non-negative number, or tiers of such prices at non-negative integer starts. */
function readPrice(p: unknown): number | Tiered | undefined {
  const ok = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
  if (ok(p)) return p;
  if (typeof p !== "object" || p === null || Array.isArray(p)) return undefined;
  const { base, tiers } = p as { base?: unknown; tiers?: unknown };
  if (!ok(base) || !Array.isArray(tiers)) return undefined;
  const out: { start: number; price: number }[] = [];
  for (const t of tiers) {
    if (typeof t !== "object" || t === null || Array.isArray(t)) return undefined;
    const { start, price } = t as { start?: unknown; price?: unknown };
    if (typeof start !== "number" || !Number.isSafeInteger(start) || start < 0 || !ok(price)) return undefined;
    out.push({ start, price });
  }
  return { base, tiers: out.sort((a, b) => a.start - b.start) };
}

/**
 * The plan of `model` (with only the reported prices, as prices.ts keeps a matched model) at `now` (ms
 * since the epoch), or undefined when it cannot be made: time-of-day prices, a constraint the package
 * would normalise or refuse, a price key outside the reported ones, an unreadable price, or a cache price
 * without the price of the class it is part of (the package refuses that set).
 */
export function ratePlan(model: ModelInfo, now: number): RatePlan | undefined {
  let set: ModelPrice;
  let from = -Infinity;
  let until = Infinity;
  if (!Array.isArray(model.prices)) set = model.prices;
  else {
    const sets = model.prices;
    if (sets.length === 0) return undefined;
    for (const c of sets) {
      const k = c.constraint;
      if (k === undefined) continue;
      if (k.type !== "start_date" || Object.keys(k).length !== 2 || typeof k.start_date !== "string" || !DATE.test(k.start_date)) return undefined;
      const at = new Date(k.start_date).getTime();
      // The package refuses a date that is not a real day (2026-02-30): so does the plan.
      if (Number.isNaN(at) || !new Date(at).toISOString().startsWith(k.start_date)) return undefined;
      if (at <= now) from = Math.max(from, at);
      else until = Math.min(until, at);
    }
    // The package's choice (`we`): from the last set back, the first without a constraint or started by now; else the first.
    let chosen = sets[0]!.prices;
    for (let i = sets.length - 1; i >= 0; i--) {
      const k = sets[i]!.constraint;
      if (k === undefined || now >= new Date((k as { start_date: string }).start_date).getTime()) {
        chosen = sets[i]!.prices;
        break;
      }
    }
    set = chosen;
  }
  const rates: Rate[] = [];
  const has = new Set<Slot>();
  let tiered = false;
  for (const [key, value] of Object.entries(set)) {
    if (value === undefined) continue;
    const unit = KEYS[key];
    const price = readPrice(value);
    if (!unit || price === undefined) return undefined;
    rates.push({ slot: unit[0], price, per: unit[1], bucket: unit[2] });
    has.add(unit[0]);
    if (typeof price === "object") tiered = true;
  }
  // The package's ancestor check: a cache price needs the input price, a one-hour write price the write price.
  if ((has.has(Slot.CacheRead) || has.has(Slot.CacheWrite) || has.has(Slot.CacheWrite1h)) && !has.has(Slot.Input)) return undefined;
  if (has.has(Slot.CacheWrite1h) && !has.has(Slot.CacheWrite)) return undefined;
  return { rates, tiered, read: has.has(Slot.CacheRead), write: has.has(Slot.CacheWrite), write1h: has.has(Slot.CacheWrite1h), from, until };
}

const valid = (x: number) => Number.isFinite(x) && x >= 0;

/**
 * USD of one request under `plan`, the package's `total_price` for the usage `{input_tokens: input,
 * output_tokens: output, cache_read_tokens: read, cache_write_tokens: write}` plus
 * `cache_write_1h_tokens: write1h` and `web_searches: searches` when above 0 (input counts the cache
 * tokens; write1h is a part of write) at `now` (ms since the epoch; read only when the plan's set is dated). Undefined when the plan
 * does not know the answer: `now` outside its interval, a value that is not a finite non-negative number,
 * or a part larger than its whole (the package then throws or rounds a tiny difference to zero).
 */
export function planCost(plan: RatePlan, input: number, output: number, read: number, write: number, write1h: number, now: () => number, searches = 0): number | undefined {
  if ((plan.from !== -Infinity || plan.until !== Infinity) && !(plan.from <= now() && now() < plan.until)) return undefined;
  if (!valid(input) || !valid(output) || !valid(read) || !valid(write) || !valid(write1h) || !valid(searches)) return undefined;
  // Leaf values (the package's `ne`): each class less its priced parts, the most specific first, summed in its order.
  const leaf1h = plan.write1h ? write1h : 0;
  const leafWrite = plan.write ? write - leaf1h : 0;
  let parts = 0;
  if (plan.write1h) parts += leaf1h;
  if (plan.read) parts += read;
  if (plan.write) parts += leafWrite;
  const leafInput = input - parts;
  if (leafWrite < 0 || leafInput < 0) return undefined;
  let inSum = 0;
  let outSum = 0;
  let other = 0;
  for (const r of plan.rates) {
    let v: number;
    switch (r.slot) {
      case Slot.Input:
        v = leafInput;
        break;
      case Slot.Output:
        v = output;
        break;
      case Slot.CacheRead:
        v = read;
        break;
      case Slot.CacheWrite:
        v = leafWrite;
        break;
      case Slot.CacheWrite1h:
        v = leaf1h;
        break;
      case Slot.WebSearches:
        v = searches;
        break;
      default:
        v = 1;
    }
    let term: number;
    const p = r.price;
    if (typeof p === "number") term = (p * v) / r.per;
    else {
      // The package's `de` then `_e`: the tier's price by the request's input tokens, per million, rescaled to the unit.
      let price = p.base;
      for (const t of p.tiers) if (input > t.start) price = t.price;
      term = ((v <= 0 ? 0 : (price * v) / 1e6) * 1e6) / r.per;
    }
    if (r.bucket === Bucket.Input) inSum += term;
    else if (r.bucket === Bucket.Output) outSum += term;
    else other += term;
  }
  return inSum + outSum + other;
}
