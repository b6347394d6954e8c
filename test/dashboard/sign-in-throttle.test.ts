/**
 * The dashboard sign-in's brute-force brake (SPEC 9.4, src/admin/sign-in-throttle.ts): after ten wrong
 * keys from one address, POST /dashboard/login answers 429 with Retry-After — even for the right key —
 * until the oldest failure leaves the 15-minute window; other addresses are not affected.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_FAILURES, SignInThrottle, signInRefusal, WINDOW_MS } from "../../src/admin/sign-in-throttle.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const ADMIN = "sy-test-admin-key-throttle-0123456789";

describe("SignInThrottle", () => {
  test("ten failures within the window refuse the address until the oldest leaves it; others and a success reset", () => {
    let now = 1_000_000;
    const t = new SignInThrottle(() => now);
    for (let i = 0; i < MAX_FAILURES - 1; i++) {
      t.failed("10.0.0.1");
      now += 1000;
    }
    expect(t.retryAfterSeconds("10.0.0.1")).toBe(0);
    t.failed("10.0.0.1");
    // the first failure was at 1_000_000; it leaves the window at 1_000_000 + WINDOW_MS
    expect(t.retryAfterSeconds("10.0.0.1")).toBe(Math.ceil((1_000_000 + WINDOW_MS - now) / 1000));
    expect(t.retryAfterSeconds("10.0.0.2")).toBe(0);
    now = 1_000_000 + WINDOW_MS; // the first failure is out, nine are left
    expect(t.retryAfterSeconds("10.0.0.1")).toBe(0);
    t.failed("10.0.0.1");
    expect(t.retryAfterSeconds("10.0.0.1")).toBeGreaterThan(0);
    t.succeeded("10.0.0.1");
    expect(t.retryAfterSeconds("10.0.0.1")).toBe(0);
  });
});

test("the refusal says a wait of up to 90 s in seconds, a longer one in minutes rounded up", () => {
  expect([40, 90, 91, 895, 900].map(signInRefusal)).toEqual([
    "Too many wrong keys from this address; try again in 40 s.",
    "Too many wrong keys from this address; try again in 90 s.",
    "Too many wrong keys from this address; try again in about 2 minutes.",
    "Too many wrong keys from this address; try again in about 15 minutes.",
    "Too many wrong keys from this address; try again in about 15 minutes.",
  ]);
});

describe("POST /dashboard/login", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(`
${providersAtFake(["anth", "anthropic"])}
keys:
  - { name: boss, key: "${ADMIN}", scopes: [admin] }
`);
  });
  afterAll(() => gw?.stop());

  const login = (key: string) =>
    fetch(`${gw.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.9" }, body: JSON.stringify({ key }) });

  test("ten wrong keys, then 429 with Retry-After for any key, the right one included", async () => {
    const statuses = await Promise.all(Array.from({ length: MAX_FAILURES }, (_, i) => login(`sy-guess-${i}`).then((r) => r.status)));
    expect(statuses).toEqual(Array(MAX_FAILURES).fill(401));
    for (const key of ["sy-guess-next", ADMIN]) {
      const res = await login(key);
      expect(res.status).toBe(429);
      const retry = Number(res.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(WINDOW_MS / 1000 - 60);
      expect(retry).toBeLessThanOrEqual(WINDOW_MS / 1000);
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("rate_limit_error");
      // about 15 minutes: said in minutes, not "895 s" (tryout5)
      expect(body.error.message).toBe(`Too many wrong keys from this address; try again in about ${Math.ceil(retry / 60)} minutes.`);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
  });
});
