/**
 * A `*-compatible` provider at a host the price package (@pydantic/genai-prices) knows by its API URL is
 * priced at that host's own prices. Until 2026-12-07 only OpenRouter's URL selected its host's entry:
 * Groq's `openai/gpt-oss-120b` was priced as OpenAI's gpt-oss-120b (0.0002187 USD for the usage below,
 * Groq's price is 0.000645) and Together's `meta-llama/Llama-3.3-70B-Instruct-Turbo` was unpriced
 * (Together's price: 0.003344). Figures from the package's data (0.1.8) for 3300 prompt tokens
 * (2000 cached read, 300 cache write) and 500 completion.
 */
import { expect, test } from "bun:test";
import { loadPriceTable, matchEndsTheHost, patternSelectsHost, PriceBook } from "../../src/pricing/prices.ts";

const usage = { inputTokens: 1000, cacheReadTokens: 2000, cacheWriteTokens: 300, outputTokens: 500 };
/**
 * The price book's clock: 12:00 UTC. DeepSeek's entry in the package has off-peak prices (half, 16:30–00:30
 * UTC); on the wall clock this test failed from 00:30 to 16:30 (CI of 2026-12-08).
 */
const NOON = () => Date.parse("2026-12-07T12:00:00Z");
const OFF_PEAK = () => Date.parse("2026-12-07T20:00:00Z");

test("Groq's and Together's base URLs select their own prices; the vendor prefix and the id alone remain the fallbacks", async () => {
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  expect(book.cost("groq", "openai-compatible", "openai/gpt-oss-120b", usage, "https://api.groq.com/openai/v1")).toEqual({ usd: 0.000645, source: "price_table", unpriced: false });
  expect(book.cost("groq", "openai-compatible", "llama-3.3-70b-versatile", usage, "https://api.groq.com/openai/v1").usd).toBeCloseTo(0.002342, 12);
  expect(book.cost("tg", "openai-compatible", "meta-llama/Llama-3.3-70B-Instruct-Turbo", usage, "https://api.together.xyz/v1").usd).toBeCloseTo(0.003344, 12);
  // remembered: a second request is priced alike
  expect(book.cost("groq", "openai-compatible", "openai/gpt-oss-120b", usage, "https://api.groq.com/openai/v1").usd).toBe(0.000645);
  // a model the host's entry lacks falls back to the vendor's table (DeepSeek's deepseek-chat)
  expect(book.cost("tg", "openai-compatible", "deepseek/deepseek-chat", usage, "https://api.together.xyz/v1").usd).toBeCloseTo(0.001041, 12);
  expect(new PriceBook(new Map(), await loadPriceTable(), OFF_PEAK).cost("tg", "openai-compatible", "deepseek/deepseek-chat", usage, "https://api.together.xyz/v1").usd).toBeCloseTo(0.0005205, 12);
  // elsewhere the same id is OpenAI's; a host merely starting with Groq's name is not Groq's
  expect(book.cost("x", "openai-compatible", "openai/gpt-oss-120b", usage, "http://127.0.0.1:9/v1").usd).toBeCloseTo(0.0002187, 12);
  expect(book.cost("x", "openai-compatible", "openai/gpt-oss-120b", usage, "https://api.groq.com.example.net/v1").usd).toBeCloseTo(0.0002187, 12);
  // the budget's dearest price per token comes from the same entry
  expect(book.usdPerTokenAtMost("groq", "openai-compatible", "openai/gpt-oss-120b", "https://api.groq.com/openai/v1")).toBeCloseTo(0.6 / 1_000_000, 15);
});

test("matchEndsTheHost: the match ends at the host's end, past it, or in a dot the pattern leaves open", () => {
  expect(matchEndsTheHost("https://api.groq.com/openai/v1", "https://api.groq.com")).toBe(true);
  expect(matchEndsTheHost("https://api.groq.com", "https://api.groq.com")).toBe(true);
  expect(matchEndsTheHost("https://router.huggingface.co/together/v1", "https://router.huggingface.co/together")).toBe(true);
  expect(matchEndsTheHost("https://api.moonshot.ai/v1", "https://api.moonshot.")).toBe(true);
  expect(matchEndsTheHost("https://api.groq.com.example.net/v1", "https://api.groq.com")).toBe(false);
  expect(matchEndsTheHost("https://api.groq.company/v1", "https://api.groq.com")).toBe(false);
});

test("a pattern ending in an open dot (Moonshot's `https://api\\.moonshot\\.`) matches one more label, no further dot", () => {
  const open = "https://api.moonshot.";
  for (const url of ["https://api.moonshot.ai/v1", "https://api.moonshot.cn/v1", "https://api.moonshot.ai", "https://api.moonshot.cn:443/v1", "https://api.moonshot.ai?x=1"]) expect([url, matchEndsTheHost(url, open)]).toEqual([url, true]);
  for (const url of ["https://api.moonshot.evil.com/v1", "https://api.moonshot.ai.example.net/v1", "https://api.moonshot.evil.com", "https://api.moonshot./v1", "https://api.moonshot.ai@other.host/v1"]) expect([url, matchEndsTheHost(url, open)]).toEqual([url, false]);
  // user info: the host is the part after "@", whatever the match covers
  expect(matchEndsTheHost("https://api.groq.com:x@other.host/v1", "https://api.groq.com")).toBe(false);
  expect(matchEndsTheHost("https://api.groq.com:8443/openai/v1", "https://api.groq.com")).toBe(true);
});

/**
 * A price table that knows a model only through a provider's URL (the package's `providerApiUrl`
 * lookup, then the provider remembered), none by its id alone: with the package's own data every
 * Moonshot model is priced alike at any host (the id alone finds Moonshot's entry too), so only a table
 * like this shows which host selected Moonshot's entry.
 */
const byUrlOnly = (table: Awaited<ReturnType<typeof loadPriceTable>>): typeof table =>
  ((u, id, opts) => (opts && ("providerApiUrl" in opts || "provider" in opts) ? table(u, id, opts) : null)) as typeof table;

test("Moonshot's prices for api.moonshot.ai and .cn, not for a host that merely starts like them", async () => {
  const table = byUrlOnly(await loadPriceTable());
  const cost = (url: string) => new PriceBook(new Map(), table, NOON).cost("ms", "openai-compatible", "kimi-k2-0905-preview", usage, url);
  expect(cost("https://api.moonshot.ai/v1")).toEqual({ usd: 0.00233, source: "price_table", unpriced: false });
  expect(cost("https://api.moonshot.cn/v1")).toEqual({ usd: 0.00233, source: "price_table", unpriced: false });
  expect(cost("https://api.moonshot.evil.com/v1")).toEqual({ unpriced: true });
  expect(cost("https://api.moonshot.ai.example.net/v1")).toEqual({ unpriced: true });
  // one book, the evil host after the real one: each base URL has its own memo
  const book = new PriceBook(new Map(), table, NOON);
  expect(book.cost("ms", "openai-compatible", "kimi-k2-0905-preview", usage, "https://api.moonshot.ai/v1").usd).toBe(0.00233);
  expect(book.cost("ms", "openai-compatible", "kimi-k2-0905-preview", usage, "https://api.moonshot.evil.com/v1").unpriced).toBe(true);
});

test("a wildcard in a pattern's host (Google's https://(.*\\.)?googleapis\\.com) does not find the name in the URL's path", async () => {
  const google = "https://(.*\\.)?googleapis\\.com";
  expect(patternSelectsHost("https://generativelanguage.googleapis.com/v1beta/openai", google)).toBe(true);
  expect(patternSelectsHost("https://other.example/.googleapis.com/v1", google)).toBe(false);
  expect(patternSelectsHost("https://other.example/v1?h=x.googleapis.com", google)).toBe(false);
  // the package's patterns that go on into the path still select their hosts
  expect(patternSelectsHost("https://router.huggingface.co/together/v1", "https://router\\.huggingface\\.co/together")).toBe(true);
  expect(patternSelectsHost("https://api.cloudflare.com/client/v4/accounts/abc/ai/v1", "https://api\\.cloudflare\\.com/client/v4/accounts/[^/]+/ai(?:/|$)")).toBe(true);
  expect(patternSelectsHost("https://api.arcee.ai", "https://api\\.arcee\\.ai(?:/|$)")).toBe(true);
  expect(patternSelectsHost("https://api.moonshot.cn/v1", "https://api\\.moonshot\\.")).toBe(true);
  expect(patternSelectsHost("https://api.moonshot.evil.com/v1", "https://api\\.moonshot\\.")).toBe(false);
  // priced: gemma-2-27b-it is Google's at Google's host only (by its id alone the package has no price for it)
  const book = new PriceBook(new Map(), await loadPriceTable(), NOON);
  expect(book.cost("g", "openai-compatible", "gemma-2-27b-it", usage, "https://generativelanguage.googleapis.com/v1beta/openai").usd).toBeCloseTo(0.00247, 12);
  expect(book.cost("g", "openai-compatible", "gemma-2-27b-it", usage, "https://other.example/.googleapis.com/v1")).toEqual({ unpriced: true });
});
