/**
 * Regression test: the price book's host match (src/pricing/prices.ts patternSelectsHost / hostOf)
 * read a provider's base URL as text, not as the URL the gateway sends requests to (until 2026-12-08).
 * What a user noticed:
 * 1. A base URL with a backslash in its authority (`https://other.example\.googleapis.com/v1`: WHATWG
 *    URL, which config validation and fetch use, reads "\" as "/", so requests go to `other.example`)
 *    was priced at Google's prices: gemma-2-27b-it cost $0.00247 there, while at
 *    `https://other.example/v1` it is unpriced.
 * 2. The same host spelled in capitals or with the DNS root dot (`https://API.GROQ.COM/openai/v1`,
 *    `https://api.groq.com./openai/v1`: the same server) was not Groq's: openai/gpt-oss-120b was priced
 *    at OpenAI's $0.0002187, not Groq's $0.000645.
 * Now the book matches the base URL as the URL parser reads it (prices.ts urlAsSent, once per URL).
 */
import { expect, test } from "bun:test";
import { loadPriceTable, PriceBook, urlAsSent } from "../../src/pricing/prices.ts";

const usage = { inputTokens: 1000, cacheReadTokens: 2000, cacheWriteTokens: 300, outputTokens: 500 };
const NOON = () => Date.parse("2026-12-07T12:00:00Z");

test("a backslash in the base URL's authority does not make another host Google's", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  const url = "https://other.example\\.googleapis.com/v1";
  expect(new URL(url).host).toBe("other.example");
  expect(book.cost("x", "openai-compatible", "gemma-2-27b-it", usage, "https://other.example/v1")).toEqual({ unpriced: true });
  // before: { usd: 0.00247, source: "price_table", unpriced: false }
  expect(book.cost("x", "openai-compatible", "gemma-2-27b-it", usage, url)).toEqual({ unpriced: true });
});

test("Groq's host in capitals or with a root dot is still Groq's", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  for (const url of ["https://API.GROQ.COM/openai/v1", "https://api.groq.com./openai/v1"]) {
    // before: 0.0002187 (OpenAI's gpt-oss-120b)
    expect([url, book.cost("groq", "openai-compatible", "openai/gpt-oss-120b", usage, url).usd]).toEqual([url, 0.000645]);
  }
});

test("urlAsSent reads a base URL as the URL parser does", () => {
  expect(urlAsSent("https://other.example\\.googleapis.com/v1")).toBe("https://other.example/.googleapis.com/v1");
  expect(urlAsSent("https://API.GROQ.COM./openai/v1?x=A")).toBe("https://api.groq.com/openai/v1?x=A");
  expect(urlAsSent("https://api.moonshot.cn:443/v1")).toBe("https://api.moonshot.cn/v1");
  expect(urlAsSent("http://127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080/v1");
  // user info keeps an "@" before the host, which the host match refuses
  expect(urlAsSent("https://u:p@api.groq.com/openai/v1")).toBe("https://@api.groq.com/openai/v1");
  expect(urlAsSent("not a url")).toBe("not a url");
});

test("a base URL with user info is still not matched by its host", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  expect(book.cost("groq", "openai-compatible", "openai/gpt-oss-120b", usage, "https://u:p@api.groq.com/openai/v1").usd).toBe(0.0002187);
});
