/**
 * Review finding (session 45): QuotaWindow.credential (16 hex characters of the SHA-256 of an account's
 * API key, stored since SQLite schema 21 / PostgreSQL 23 so a start with another key leaves the old key's
 * windows out) is an internal field of the store, but the admin API copies whole windows into its
 * answers (`GET /admin/api/quota`: `{ ...w }` in src/admin/subscription-routes.ts; `GET
 * /admin/api/accounts` quota), so a digest of the upstream provider key is handed to every admin client
 * (CLI `switchyard usage --json`, the dashboard). Expected: no `credential` member in either answer.
 *
 * Fixed: the member is `keyHash` (src/store/account-state.ts) and the replies build each window member by
 * member (src/accounts/quota.ts shownQuotaWindow); the reply schema QuotaWindowReply is strict, and the
 * replies are checked against it here, so a new internal member that reaches a reply fails this test.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as v from "valibot";
import { OLDER_ROUTE_RESPONSES } from "../../src/admin/reply-schemas.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const ENV = { OAI_KEY: "sk-review-hash-key" };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:OAI_KEY }
`,
    { env: ENV },
  );
  gw.fake.handle((r) => {
    const reply = simpleReply(r.format!, { text: "hi", model: r.model }, r.stream);
    reply.headers = { "x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "90", "x-ratelimit-reset-requests": "1h" };
    return reply;
  });
});
afterAll(() => gw?.stop());

const admin = async (path: string) => (await (await fetch(`${gw.url}/admin/api${path}`, { headers: { authorization: `Bearer ${gw.app.adminToken}` } })).json()) as any;

test("the admin API's quota windows carry no hash of the upstream API key", async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const quotaReply = await admin("/quota");
  const accountsReply = await admin("/accounts");
  const quota = quotaReply.accounts.find((a: any) => a.id === "oai-1").windows;
  const accounts = accountsReply.accounts.find((a: any) => a.id === "oai-1").quota;
  expect(quota.length).toBe(1);
  const digest = new Bun.CryptoHasher("sha256").update(ENV.OAI_KEY).digest("hex").slice(0, 16);
  expect({ quota: JSON.stringify(quota).includes(digest), accounts: JSON.stringify(accounts).includes(digest) }).toEqual({ quota: false, accounts: false });
  expect(quota.map((w: any) => Object.keys(w).includes("credential"))).toEqual([false]);
  expect(accounts.map((w: any) => Object.keys(w).sort())).toEqual([["accountId", "limit", "model", "remaining", "remainingPercent", "resetAt", "updatedAt", "window"]]);
  // The reply schemas (OpenAPI) name every member a window may carry and refuse others: a member added
  // to the store's windows that reaches a reply fails here.
  const issues = (key: string, body: unknown) => (v.safeParse(OLDER_ROUTE_RESPONSES[key] as v.GenericSchema, body).issues ?? []).map((i) => `${v.getDotPath(i)}: ${i.message}`);
  expect({ quota: issues("GET /admin/api/quota", quotaReply), accounts: issues("GET /admin/api/accounts", accountsReply) }).toEqual({ quota: [], accounts: [] });
  const leaked = { ...quota[0], keyHash: "0123456789abcdef" };
  expect(issues("GET /admin/api/quota", { ...quotaReply, accounts: [{ id: "oai-1", providerId: "oai", windows: [leaked] }] }).length).toBeGreaterThan(0);
});
