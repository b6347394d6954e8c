/**
 * A `*-compatible` provider at a host the price package (@pydantic/genai-prices) knows by its API URL is
 * priced at that host's own prices. Until 2026-12-07 only OpenRouter's URL selected its host's entry:
 * Groq's `openai/gpt-oss-120b` was priced as OpenAI's gpt-oss-120b (0.0002187 USD for the usage below,
 * Groq's price is 0.000645) and Together's `meta-llama/Llama-3.3-70B-Instruct-Turbo` was unpriced
 * (Together's price: 0.003344). Figures from the package's data (0.1.8) for 3300 prompt tokens
 * (2000 cached read, 300 cache write) and 500 completion.
 */
import { expect, test } from "bun:test";
import { loadPriceTable, matchEndsTheHost, PriceBook } from "../../src/pricing/prices.ts";

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
