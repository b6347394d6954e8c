/**
 * A request too large for the per-minute token window of the account it reached, whose `max_attempts`
 * (SPEC 6.1) ran out with another account untried (SPEC 2.4, 6.3: the too_large_for_window row, no
 * account effect, next account). Whether a retry may be served depends on the untried account's window,
 * which the gateway knows once it has seen that account's rate-limit headers (SPEC P-5, OpenAI's
 * `x-ratelimit-limit-tokens`): not known, or large enough, → `Retry-After: 1` (a retry may reach it);
 * known and too small as well (a limit under the 429's "Requested 35364") → no Retry-After and
 * `x-should-retry: false`, as when every account answered (test/e2e/request-too-large-429.test.ts).
 * Before, every such request got `Retry-After: 1`. The strategy is round-robin so that each request
 * reaches the other account first. Real gateway, fake upstream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply } from "../support/fake-upstream.ts";

const TOO_LARGE = "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364.";

/** The 429 of an account whose tier allows 30 000 tokens a minute, with the headers OpenAI sends. */
const tooLarge: FakeReply = {
  status: 429,
  headers: { "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "30000", "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499" },
  json: { error: { message: TOO_LARGE, type: "tokens", param: null, code: "rate_limit_exceeded" } },
};

const yaml = `providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: one, provider: oai, api_key: env:KEY_ONE }
  - { id: two, provider: oai, api_key: env:KEY_TWO }
settings:
  max_attempts: 1
  account_strategy: round-robin
`;
const env = { KEY_ONE: "sk-test-one-aaaaaaaa", KEY_TWO: "sk-test-two-bbbbbbbb" };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(yaml, { env, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const chat = (content = "a very long prompt") =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content }] }),
  });
const keys = () => gw.fake.requests.map((r) => r.headers.authorization);

test("the untried account's window is not known: 429 with Retry-After 1, no x-should-retry (a retry may reach it)", async () => {
  gw.fake.handle(() => tooLarge);
  const res = await chat();
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("1");
  expect(res.headers.get("x-should-retry")).toBeNull();
  expect(((await res.json()) as { error: { message: string; code: string } }).error).toMatchObject({ message: TOO_LARGE, code: "rate_limit_exceeded" });
  expect(gw.fake.requests.length).toBe(1);
});

test("the retry reaches the other account, too small as well; the first's window is known (30000 < 35364): no Retry-After, x-should-retry: false", async () => {
  gw.fake.handle(() => tooLarge);
  const res = await chat();
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBeNull();
  expect(res.headers.get("x-should-retry")).toBe("false");
  expect(((await res.json()) as { error: { message: string; code: string } }).error).toMatchObject({ message: TOO_LARGE, code: "rate_limit_exceeded" });
  // one call per account: each answered its 429 once
  expect(new Set(keys())).toEqual(new Set([`Bearer ${env.KEY_ONE}`, `Bearer ${env.KEY_TWO}`]));
  expect(gw.fake.requests.length).toBe(2);
  // and so on for the next request: both windows are known to be too small
  const again = await chat();
  expect(again.status).toBe(429);
  expect(again.headers.get("retry-after")).toBeNull();
  expect(again.headers.get("x-should-retry")).toBe("false");
  expect(gw.fake.requests.length).toBe(3);
});

test("the untried account's known window is large enough (200000 >= 35364): Retry-After 1", async () => {
  const big = await startGateway(yaml, { env, fake: await startFakeUpstream() });
  try {
    // `one` serves within a 200 000-token window, `two` is the small tier.
    big.fake.handle((r) =>
      r.headers.authorization === `Bearer ${env.KEY_ONE}`
        ? { ...simpleReply(r.format!, { text: "served", model: r.model }, r.stream), headers: { "x-ratelimit-limit-tokens": "200000", "x-ratelimit-remaining-tokens": "199990" } }
        : tooLarge,
    );
    const post = () =>
      fetch(`${big.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "oai/gpt-4o-mini", messages: [{ role: "user", content: "a very long prompt" }] }),
      });
    // Until `two` answers after `one` was seen (round-robin: within three requests).
    let last: Response | undefined;
    for (let i = 0; i < 3 && !(last?.status === 429 && big.fake.requests.some((r) => r.headers.authorization === `Bearer ${env.KEY_ONE}`)); i++) {
      last = await post();
      if (last.status === 200) expect(((await last.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("served");
    }
    expect(big.fake.requests.map((r) => r.headers.authorization).at(-1)).toBe(`Bearer ${env.KEY_TWO}`);
    expect(last!.status).toBe(429);
    expect(last!.headers.get("retry-after")).toBe("1");
    expect(last!.headers.get("x-should-retry")).toBeNull();
    expect(((await last!.json()) as { error: { message: string } }).error.message).toBe(TOO_LARGE);
  } finally {
    await big.stop();
  }
});
