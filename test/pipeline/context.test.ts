/**
 * Request and route ids (X-Request-Id, X-Switchyard-Route-Id): their shape, their uniqueness, and that
 * they sort by the time they were minted (the store's indexes on them then grow at their end).
 */
import { expect, test } from "bun:test";
import { defaultIds } from "../../pipeline/context.ts";

test("request ids are req_ + 24 hex chars, route ids sy_ + 12 hex + 24 base64url chars; 10,000 of each are distinct", () => {
  const req = new Set<string>();
  const route = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const a = defaultIds.request();
    const b = defaultIds.route();
    expect(a).toMatch(/^req_[0-9a-f]{24}$/);
    expect(b).toMatch(/^sy_[0-9a-f]{12}[A-Za-z0-9_-]{24}$/);
    req.add(a);
    route.add(b);
  }
  expect(req.size).toBe(10_000);
  expect(route.size).toBe(10_000);
});

test("ids minted later sort after earlier ones as text; the first 12 hex chars are the minting time", async () => {
  const first = [defaultIds.request(), defaultIds.route()] as const;
  await Bun.sleep(3);
  const later = [defaultIds.request(), defaultIds.route()] as const;
  expect(first[0] < later[0]).toBe(true);
  expect(first[1] < later[1]).toBe(true);
  const before = Date.now();
  const [x, r] = [defaultIds.route(), defaultIds.request()];
  const after = Date.now();
  for (const t of [parseInt(x.slice(3, 15), 16), parseInt(r.slice(4, 16), 16)]) {
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
  }
});
