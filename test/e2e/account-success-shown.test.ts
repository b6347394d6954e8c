/**
 * The accounts' Success as a user reads it (`switchyard accounts status`, `GET /admin/api/accounts`
 * `health`, the dashboard's Accounts page), through the real gateway: an account whose only attempt
 * failed reads 0 %, with its basis ("0 of 1 attempt"), right after and still ten minutes later. Until
 * session 36 the figure was the scored strategy's, with one virtual success added and the failures'
 * weight decaying: one failed attempt read 50 % at once and rose to 81 % while the account stood idle
 * (a new user's tryout: accounts oc-429 and oc-500, each failed once, read "success 81 %").
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { realClock } from "../../src/clock.ts";
import type { Clock } from "../../pipeline/ports.ts";
import { formatAccountsStatus } from "../../src/cli/routing.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/** The real clock, moved forward by `shift` (ms) when the test says so. */
const clock: Clock & { shift: number } = { shift: 0, now: () => Date.now() + clock.shift, sleep: realClock.sleep };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
providers:
  - { id: oa, kind: openai-compatible, base_url: "{{FAKE}}/a/v1" }
  - { id: ob, kind: openai-compatible, base_url: "{{FAKE}}/b/v1" }
  - { id: oc, kind: openai-compatible, base_url: "{{FAKE}}/c/v1" }
accounts:
  - { id: oc-429, provider: oa, api_key: env:FAKE_KEY }
  - { id: oc-500, provider: ob, api_key: env:FAKE_KEY }
  - { id: oc-ok, provider: oc, api_key: env:FAKE_KEY }
`,
    { clock },
  );
  gw.fake.handle((req) => {
    if (req.path.startsWith("/a/")) return { status: 429, headers: { "retry-after": "3600" }, json: { error: { message: "slow down", type: "rate_limit_error" } } };
    if (req.path.startsWith("/b/")) return { status: 500, json: { error: { message: "boom", type: "server_error" } } };
    return undefined;
  });
});
afterAll(() => gw?.stop());

const ask = async (model: string) => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
  await res.arrayBuffer();
  return res.status;
};
const status = async () => (await (await fetch(`${gw.url}/admin/api/accounts`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } })).json()) as any;
const health = (s: any, id: string) => s.accounts.find((a: any) => a.id === id).health;
const line = (s: any, id: string) => formatAccountsStatus(s).split("\n").find((l) => l.startsWith(`${id} (`));

test("an account whose one attempt failed reads success 0 % (0 of 1 attempt), and still does ten minutes later", async () => {
  expect(await ask("oa/m")).toBe(429);
  expect(await ask("ob/m")).not.toBe(200);
  expect(await ask("oc/m")).toBe(200);
  expect(await ask("oc/m")).toBe(200);
  gw.app.settle();
  const byPath = (p: string) => gw.fake.requests.filter((r) => r.path.startsWith(p)).length;
  expect([byPath("/a/"), byPath("/b/")]).toEqual([1, 1]); // one attempt each, as in the tryout
  for (const shift of [0, 10 * 60_000]) {
    clock.shift = shift;
    const s = await status();
    expect(health(s, "oc-429")).toMatchObject({ successRate: 0, succeeded: 0, failed: 1, seen: true });
    expect(health(s, "oc-500")).toMatchObject({ successRate: 0, succeeded: 0, failed: 1, seen: true });
    expect(health(s, "oc-ok")).toMatchObject({ successRate: 1, succeeded: 2, failed: 0 });
    expect(line(s, "oc-429")).toContain("; success 0 % (0 of 1 attempt);");
    expect(line(s, "oc-ok")).toContain("; success 100 % (2 of 2 attempts)");
  }
});
