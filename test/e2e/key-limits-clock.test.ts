/**
 * Client key rate limits (SPEC 9.6) when the system clock is stepped backwards (NTP, an operator):
 * rpm and tpm windows are durations, read from the monotonic clock, so a request a minute after the
 * limit was reached is served although the wall clock now reads an hour earlier (it was refused with
 * 429 and Retry-After 3599 s: the step plus the minute less the time gone). A budget window's start is
 * persisted on the wall clock, but its length is measured on the monotonic clock while the gateway
 * runs: a step back neither lengthens its refusals nor keeps it from ending on time.
 * The gateway runs on a clock whose wall time and monotonic time the test moves apart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { ShiftedClock } from "../support/shifted-clock.ts";
import { providersAtFake } from "../support/configs.ts";


const KEYS = { rpm: "sy-test-clock-rpm-000000000001", tpm: "sy-test-clock-tpm-000000000002", budget: "sy-test-clock-budget-0000000003" };
const YAML = `
${providersAtFake(["oai", "openai"])}
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
server: { require_api_key: true }
keys:
  - { name: rpm, key: ${KEYS.rpm}, limits: { rpm: 1 } }
  - { name: tpm, key: ${KEYS.tpm}, limits: { tpm: 10 } }
  - { name: budget, key: ${KEYS.budget}, limits: { budgets: [{ window: 5h, tokens: 10 }] } }
`;

const clock = new ShiftedClock();
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { clock });
});
afterAll(async () => {
  await gw?.stop();
});

const chat = (key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
  });

describe("rate limits across a wall clock stepped backwards", () => {
  test("rpm and tpm refuse within the minute, and serve a minute later although the wall clock went back an hour", async () => {
    for (const key of [KEYS.rpm, KEYS.tpm]) expect((await chat(key)).status).toBe(200);
    // rpm 1 is used; the first reply's 18 tokens are over tpm 10.
    for (const key of [KEYS.rpm, KEYS.tpm]) {
      const r = await chat(key);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    }
    // 61 s pass while the wall clock is stepped back an hour.
    clock.elapsed += 61_000;
    clock.wall -= 3_600_000;
    for (const key of [KEYS.rpm, KEYS.tpm]) {
      const r = await chat(key);
      expect({ key, status: r.status, retryAfter: r.headers.get("retry-after") }).toEqual({ key, status: 200, retryAfter: null });
    }
  });
});

describe("a budget window across a wall clock stepped backwards", () => {
  test("its refusal says the time left, not that plus the step; it ends 5 h after it opened although the wall clock reads an hour less", async () => {
    clock.wall = 0;
    expect((await chat(KEYS.budget)).status).toBe(200);
    // The reply's 18 tokens are over the 10-token budget: refused until the 5 h window ends.
    const first = await chat(KEYS.budget);
    expect(first.status).toBe(429);
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThan(5 * 3600 - 60);
    expect(Number(first.headers.get("retry-after"))).toBeLessThanOrEqual(5 * 3600);
    // The wall clock is stepped back an hour: the window still ends when it did (it said 6 h before).
    clock.wall -= 3_600_000;
    const stepped = await chat(KEYS.budget);
    expect(stepped.status).toBe(429);
    expect(Number(stepped.headers.get("retry-after"))).toBeLessThanOrEqual(5 * 3600);
    const body = (await stepped.json()) as { error: { message: string } };
    expect(body.error.message).toContain("the window resets in 5h 0m");
    // 5 h pass (the wall clock still an hour behind): the window has ended, the key is served.
    clock.elapsed += 5 * 3_600_000;
    const r = await chat(KEYS.budget);
    expect({ status: r.status, retryAfter: r.headers.get("retry-after") }).toEqual({ status: 200, retryAfter: null });
  });
});
