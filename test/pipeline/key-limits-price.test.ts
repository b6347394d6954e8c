/**
 * What a token of a requested model may cost (pipeline/key-limits.ts `usdPerTokenOf`, SPEC 9.6): the
 * USD a budget holds per expected token of a request in flight before any priced request has settled
 * in its window, read from the targets the name resolves to.
 */
import { describe, expect, test } from "bun:test";
import { usdPerTokenOf } from "../../pipeline/key-limits.ts";
import type { Target } from "../../pipeline/resolve.ts";
import { combo, provider, table } from "./routing-helpers.ts";

const PRICES: Record<string, number> = { "cheap/small": 1e-6, "dear/big": 15e-6 };
const pricing = (t = table([provider("cheap"), provider("dear"), provider("free")], { fast: "cheap/small" }, [combo("both", ["cheap/small", "free/local", "dear/big"]), combo("local", ["free/local"])])) => ({
  price: (x: Target) => PRICES[x.label],
  routing: () => t,
});

describe("usdPerTokenOf", () => {
  test("a provider/model and an alias: their target's price", () => {
    expect(usdPerTokenOf("cheap/small", pricing())).toBe(1e-6);
    expect(usdPerTokenOf("fast", pricing())).toBe(1e-6);
  });

  test("a combo: its dearest priced target (whichever the order picks, the hold covers it); an unpriced target is passed over", () => {
    expect(usdPerTokenOf("both", pricing())).toBe(15e-6);
  });

  test("nothing priced, or a name that resolves to nothing: undefined (the budget holds nothing for it, as before)", () => {
    expect(usdPerTokenOf("local", pricing())).toBeUndefined();
    expect(usdPerTokenOf("free/local", pricing())).toBeUndefined();
    expect(usdPerTokenOf("nope/model", pricing())).toBeUndefined();
  });
});
