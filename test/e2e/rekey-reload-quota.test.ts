/**
 * An account's API key replaced in the config file, then reloaded (SPEC 2.3), through the real gateway:
 * the old key's quota windows go (SPEC A-1, P-5). The old key's headers said 1 request of 100 left
 * (≤ 2 %: the account excluded until the window reset, an hour); with the new key the account serves
 * the next request at once. Until 2026-12-07 the window held, and the request got no account.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const ENV = { OLD_KEY: "sk-reload-old-key", NEW_KEY: "sk-reload-new-key" };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
providers:
  - { id: oai, kind: openai, base_url: "{{FAKE}}/v1" }
accounts:
  - { id: oai-1, provider: oai, api_key: env:OLD_KEY }
`,
    { env: ENV },
  );
  gw.fake.handle((r) => {
    const reply = simpleReply(r.format!, { text: "hi", model: r.model }, r.stream);
    if (r.headers.authorization === `Bearer ${ENV.OLD_KEY}`) reply.headers = { "x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "1", "x-ratelimit-reset-requests": "1h" };
    return reply;
  });
});
afterAll(() => gw?.stop());

const chat = async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }) });
  await res.arrayBuffer();
  return res.status;
};
const admin = async (method: string, path: string) => (await (await fetch(`${gw.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${gw.app.adminToken}` } })).json()) as any;
const windows = async () => ((await admin("GET", "/accounts")).accounts.find((a: any) => a.id === "oai-1").quota as Array<{ window: string }>).map((q) => q.window);

test("a reload that replaces the account's API key drops the old key's quota windows: the account serves again at once", async () => {
  expect(await chat()).toBe(200);
  expect(await windows()).toEqual(["requests"]);
  expect(await chat()).not.toBe(200); // 1 % left: excluded (SPEC A-1)
  writeFileSync(gw.configPath, readFileSync(gw.configPath, "utf8").replace("env:OLD_KEY", "env:NEW_KEY"));
  expect((await admin("POST", "/config/reload")).changed).toBeDefined();
  expect(await windows()).toEqual([]);
  gw.fake.reset();
  expect(await chat()).toBe(200);
  expect(gw.fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${ENV.NEW_KEY}`]);
  gw.app.settle();
  // and after the next re-read of the store, too
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
  expect(await windows()).toEqual([]);
});
