/**
 * A 429 saying the request alone is larger than the per-minute token limit (sdk16 S1): OpenAI's
 * "Request too large for gpt-4o-mini … on tokens per min (TPM): Limit 30000, Requested 35364", as an
 * HTTP 429 or as a Responses stream's `response.failed` (recorded fixture
 * openai-responses/failed-only.sse). Waiting cannot make it pass, so the client gets the error at once
 * without a long Retry-After, and the model is not put into a per-minute cooldown: the next request
 * (the same client's retry, or anyone else's) reaches the upstream instead of a `no_account` 429.
 * A genuine per-minute limit still cools the model down. The limit is one account's (its
 * organisation's usage tier) for one model: another account of the pool serves the request (review16 R1).
 * The answer carries `x-should-retry: false`, which the official OpenAI and Anthropic SDKs obey before
 * retrying a 429 (their `shouldRetry`): the real SDKs, at their default `maxRetries: 2`, send the request
 * once (they sent it three times, each reaching the upstream: sdk16's tryout, README "Not done yet").
 * Real gateway, fake upstream.
 */
import { expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { recordedBytes } from "../support/fixtures.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway } from "../support/gateway.ts";

const suite = gatewaySuite();

const TOO_LARGE = "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364.";

const chat = (model: string) =>
  fetch(`${suite.gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "a very long prompt" }] }),
  });

test("an HTTP 429 'Request too large … tokens per min': each request reaches the upstream and gets its 429 at once, no cooldown, no Retry-After", async () => {
  const { gw } = suite;
  let tooLarge = true;
  gw.fake.handle((r) =>
    tooLarge
      ? { status: 429, json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } } }
      : simpleReply(r.format!, { text: "fits", model: r.model }, r.stream),
  );
  for (let i = 0; i < 2; i++) {
    const res = await chat("oai/gpt-4o-mini");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error).toMatchObject({ message: TOO_LARGE, code: "rate_limit_exceeded" });
  }
  expect(gw.fake.requests.length).toBe(2);
  // A smaller request right after is served: the model did not cool down.
  tooLarge = false;
  const ok = await chat("oai/gpt-4o-mini");
  expect(ok.status).toBe(200);
  expect(((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe("fits");
});

test("the same from a Responses upstream's response.failed (recorded failed-only.sse), for a Chat client: never refused as cooling down", async () => {
  const { gw } = suite;
  const sse = new TextDecoder().decode(await recordedBytes("openai-responses/failed-only.sse"));
  gw.fake.handle(() => ({ sse }));
  for (let i = 0; i < 2; i++) {
    const res = await chat("resp/gpt-4o-mini");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(res.headers.get("x-should-retry")).toBe("false");
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error.code).not.toBe("no_account");
    expect(body.error.message).toBe(TOO_LARGE);
  }
  expect(gw.fake.requests.length).toBe(2);
});

test("the real OpenAI SDK (default maxRetries 2) sends the too-large request once and throws its 429; the Anthropic SDK likewise", async () => {
  const { gw } = suite;
  gw.fake.handle(() => ({ status: 429, json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } } }));
  const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1` });
  expect(openai.maxRetries).toBe(2);
  const err = await openai.chat.completions.create({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content: "a very long prompt" }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  expect((err as InstanceType<typeof OpenAI.RateLimitError>).status).toBe(429);
  expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toContain(TOO_LARGE);
  expect(gw.fake.requests.length).toBe(1);

  // An Anthropic client translated to the same upstream: its SDK obeys the same header.
  const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: gw.url });
  expect(anthropic.maxRetries).toBe(2);
  const aerr = await anthropic.messages.create({ model: "oai/gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "a very long prompt" }] }).catch((e: unknown) => e);
  expect(aerr).toBeInstanceOf(Anthropic.RateLimitError);
  expect(gw.fake.requests.length).toBe(2);
});

test("a genuine per-minute limit (the request fits, the window is full) still cools the model down", async () => {
  const { gw } = suite;
  const real = "Rate limit reached for gpt-4o in organization on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.";
  gw.fake.handle(() => ({ status: 429, json: { error: { message: real, type: "tokens", param: null, code: "rate_limit_exceeded" } } }));
  const first = await chat("oai/gpt-4o");
  expect(first.status).toBe(429);
  expect(first.headers.get("retry-after")).toBe("90");
  expect(first.headers.get("x-should-retry")).toBeNull();
  const second = await chat("oai/gpt-4o");
  expect(second.status).toBe(429);
  expect(second.headers.get("x-should-retry")).toBeNull();
  expect(((await second.json()) as { error: { code: string } }).error.code).toBe("no_account");
  expect(gw.fake.requests.length).toBe(1);
});

test("a pool of two accounts: the one whose tier is too small answers the 429, the other serves the request; neither cools down (review16 R1)", async () => {
  const yaml = `providers:\n  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }\naccounts:\n  - { id: small-tier, provider: oai, api_key: env:KEY_SMALL, priority: 0 }\n  - { id: big-tier, provider: oai, api_key: env:KEY_BIG, priority: 1 }\n`;
  const gw = await startGateway(yaml, { env: { KEY_SMALL: "sk-small-tier", KEY_BIG: "sk-big-tier" } });
  try {
    gw.fake.handle((r) =>
      r.headers.authorization === "Bearer sk-small-tier"
        ? { status: 429, json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } } }
        : simpleReply(r.format!, { text: "served by the bigger tier", model: r.model }, r.stream),
    );
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        // two conversations (a served conversation stays with its account: prompt-cache affinity)
        body: JSON.stringify({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content: `a very long prompt, conversation ${i}` }] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("served by the bigger tier");
    }
    // each conversation tried the small tier first (no cooldown after the first), then the big one
    expect(gw.fake.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-small-tier", "Bearer sk-big-tier", "Bearer sk-small-tier", "Bearer sk-big-tier"]);
  } finally {
    await gw.stop();
  }
});

test("a combo whose first target failed otherwise (a 500) and whose second is too large: the 429 goes without x-should-retry, the first may serve a retry (review17 R4)", async () => {
  const yaml = `providers:\n  - { id: anth, kind: anthropic, base_url: "{{FAKE}}" }\n  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }\naccounts:\n  - { id: anth-1, provider: anth, api_key: env:FAKE_KEY }\n  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }\ncombos:\n  - name: big-prompt\n    targets:\n      - model: anth/claude-x\n      - model: oai/gpt-4o-mini\n`;
  const gw = await startGateway(yaml);
  try {
    gw.fake.handle((r) =>
      r.format === "anthropic-messages"
        ? { status: 500, json: { type: "error", error: { type: "api_error", message: "Internal server error" } } }
        : { status: 429, json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } } },
    );
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "big-prompt", messages: [{ role: "user", content: "a very long prompt" }] }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("x-should-retry")).toBeNull();
    expect(gw.fake.requests.some((r) => r.format === "anthropic-messages")).toBe(true);
    expect(gw.fake.requests.at(-1)!.format).toBe("openai-chat");
  } finally {
    await gw.stop();
  }
});

test("a too-large 429 that also carries OpenAI's x-ratelimit-reset-tokens / -requests: still x-should-retry: false and no Retry-After (the reset wait does not let it through); the SDKs send it once", async () => {
  const { gw } = suite;
  const resets = { "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "30000", "x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "1s" };
  gw.fake.handle(() => ({ status: 429, headers: resets, json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } } }));
  const res = await chat("oai/gpt-4o-mini");
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBeNull();
  expect(res.headers.get("x-should-retry")).toBe("false");
  expect(((await res.json()) as { error: { message: string } }).error.message).toBe(TOO_LARGE);
  expect(gw.fake.requests.length).toBe(1);

  const openai = new OpenAI({ apiKey: "placeholder", baseURL: `${gw.url}/v1` });
  const err = await openai.chat.completions.create({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content: "a very long prompt" }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  expect(gw.fake.requests.length).toBe(2);
  const anthropic = new Anthropic({ apiKey: "placeholder", baseURL: gw.url });
  const aerr = await anthropic.messages.create({ model: "oai/gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content: "a very long prompt" }] }).catch((e: unknown) => e);
  expect(aerr).toBeInstanceOf(Anthropic.RateLimitError);
  expect(gw.fake.requests.length).toBe(3);
});
