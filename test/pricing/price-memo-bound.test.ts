/**
 * The price book remembers each model's lookup (src/pricing/prices.ts `PriceBook.memo`): with
 * client-chosen model names (a provider that serves any name; a 45-minute soak sent 2,767 names) that
 * memory must stay bounded, at most `PriceBook.MAX_REMEMBERED_MODELS` models per vendor, the longest
 * remembered forgotten first and looked up again when it comes back, priced as before.
 */
import { expect, test } from "bun:test";
import { PriceBook, type PriceTable } from "../../src/pricing/prices.ts";

test("random model names: the book remembers at most MAX_REMEMBERED_MODELS of them, the oldest forgotten first", () => {
  const looked: string[] = [];
  const table = ((_usage: unknown, model: string) => {
    looked.push(model);
    return null;
  }) as unknown as PriceTable;
  const book = new PriceBook(new Map(), table);
  const max = PriceBook.MAX_REMEMBERED_MODELS;
  expect(max).toBe(2000);
  const extra = 500;
  for (let i = 0; i < max + extra; i++) expect(book.cost("p", "openai-compatible", `rnd-${i}`, { inputTokens: 10 }).unpriced).toBe(true);
  expect(looked.length).toBe(max + extra);
  // The newest `max` are remembered: asking again does not look them up.
  looked.length = 0;
  for (let i = extra; i < max + extra; i++) book.cost("p", "openai-compatible", `rnd-${i}`, { inputTokens: 10 });
  expect(looked.length).toBe(0);
  // The first `extra` were forgotten: each is looked up again (and still unpriced).
  for (let i = 0; i < extra; i++) expect(book.cost("p", "openai-compatible", `rnd-${i}`, { inputTokens: 10 }).unpriced).toBe(true);
  expect(looked.length).toBe(extra);
});
