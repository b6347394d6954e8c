/**
 * SPEC P-7 for accounts declared in the config file: the file keeps its original token, so the gateway
 * stores the refreshed (rotated) credential beside it, durably, and a restart uses it instead of the
 * file's spent one — until the file itself is given a new token.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startFakeUpstream } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeVendor, vendorProviders } from "../oauth/fake-oauth.ts";

let gw: TestGateway | undefined;
let dataDir: string | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test("a config-file OAuth account's refreshed token survives a restart (no second refresh, no quarantine)", async () => {
  const upstream = await startFakeUpstream();
  const vendor = await startFakeVendor(upstream);
  cleanups.push(() => vendor.stop(), () => upstream.stop());
  const t = vendor.seed({ name: "filed", models: ["claude-x"] });
  const yaml =
    vendorProviders(vendor.url) +
    `accounts:
  - id: cc-file
    provider: cc
    access_token: env:CC_ACCESS
    refresh_token: env:CC_REFRESH
    expires_at: ${Date.now() + 3600_000}
`;
  const env = { CC_ACCESS: t.accessToken, CC_REFRESH: t.refreshToken };
  const post = (url: string) =>
    fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "cc/claude-x", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });

  gw = await startGateway(yaml, { fake: upstream, env });
  dataDir = gw.dataDir;
  vendor.revokeAccess(t.accessToken);
  const refreshes0 = vendor.refreshCalls.length;
  expect((await post(gw.url)).status).toBe(200);
  expect(vendor.refreshCalls.slice(refreshes0)).toEqual([t.refreshToken]);
  const refreshedToken = vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token;
  expect(refreshedToken).not.toBe(t.accessToken);
  const overrides = await gw.app.store.listCredentialOverrides();
  expect(overrides.map((o) => o.accountId)).toEqual(["cc-file"]);

  await gw.stopGatewayOnly();
  gw = await startGateway(yaml, { fake: upstream, env, dataDir });
  cleanups.push(() => gw!.stopGatewayOnly());
  const refreshes1 = vendor.refreshCalls.length;
  expect((await post(gw.url)).status).toBe(200);
  expect(vendor.refreshCalls.length).toBe(refreshes1);
  expect(vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token).toBe(refreshedToken);
}, 30_000);
