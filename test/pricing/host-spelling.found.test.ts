/**
 * FOUND (report only, low): the price book's host match (src/pricing/prices.ts patternSelectsHost /
 * hostOf) reads a provider's base URL as text, not as the URL the gateway sends requests to.
 *
 * What a user would notice:
 * 1. A base URL with a backslash in its authority (`https://other.example\.googleapis.com/v1`: WHATWG
 *    URL, which config validation and fetch use, reads "\" as "/", so requests go to `other.example`)
 *    is priced at Google's prices: gemma-2-27b-it costs $0.00247 there, while at
 *    `https://other.example/v1` it is unpriced. hostOf ends the authority at / ? # only.
 * 2. The same host spelled in capitals or with the DNS root dot (`https://API.GROQ.COM/openai/v1`,
 *    `https://api.groq.com./openai/v1`: URL reads `api.groq.com` / `api.groq.com.`, the same server) is
 *    not Groq's: openai/gpt-oss-120b is priced at OpenAI's $0.0002187, not Groq's $0.000645
 *    (the pattern is matched case-sensitively against the raw text).
 * Expected: the provider the URL's parsed host selects. Actual: the text's.
 */
import { expect, test } from "bun:test";
import { loadPriceTable, PriceBook } from "../../src/pricing/prices.ts";

const usage = { inputTokens: 1000, cacheReadTokens: 2000, cacheWriteTokens: 300, outputTokens: 500 };
const NOON = () => Date.parse("2026-12-07T12:00:00Z");

test("a backslash in the base URL's authority does not make another host Google's", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  const url = "https://other.example\\.googleapis.com/v1";
  expect(new URL(url).host).toBe("other.example");
  expect(book.cost("x", "openai-compatible", "gemma-2-27b-it", usage, "https://other.example/v1")).toEqual({ unpriced: true });
  // actual: { usd: 0.00247, source: "price_table", unpriced: false }
  expect(book.cost("x", "openai-compatible", "gemma-2-27b-it", usage, url)).toEqual({ unpriced: true });
});

test("Groq's host in capitals or with a root dot is still Groq's", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  for (const url of ["https://API.GROQ.COM/openai/v1", "https://api.groq.com./openai/v1"]) {
    // actual: 0.0002187 (OpenAI's gpt-oss-120b)
    expect([url, book.cost("groq", "openai-compatible", "openai/gpt-oss-120b", usage, url).usd]).toEqual([url, 0.000645]);
  }
});
