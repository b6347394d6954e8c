/**
 * A request sent with an account's old API key whose reply headers arrive after a reload replaced the
 * key (SPEC 2.3, A-1, P-5), through the real gateway: the old key's quota windows in those headers (1
 * request of 100 left: the account excluded until the window resets) are not recorded, so the account
 * serves the next request with its new key at once. Until session 45 the late reply recorded them again
 * after the reload had dropped them, in memory and in the store.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const ENV = { OLD_KEY: "sk-late-old-key", NEW_KEY: "sk-late-new-key" };
let gw: TestGateway;
let release!: () => void;
let arrived!: () => void;
const held = new Promise<void>((resolve) => (release = resolve));
const reached = new Promise<void>((resolve) => (arrived = resolve));
const handler = async (r: ReceivedRequest): Promise<FakeReply> => {
  const reply = simpleReply(r.format!, { text: "hi", model: r.model }, r.stream);
  if (r.headers.authorization === `Bearer ${ENV.OLD_KEY}`) {
    arrived();
    await held; // the reply's headers wait until the key has been replaced
    reply.headers = { "x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "1", "x-ratelimit-reset-requests": "1h" };
  } else reply.headers = { "x-ratelimit-limit-requests": "100", "x-ratelimit-remaining-requests": "90", "x-ratelimit-reset-requests": "1h" };
  return reply;
};
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
  gw.fake.handle(handler);
});
afterAll(() => gw?.stop());

const chat = async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }) });
  await res.arrayBuffer();
  return res.status;
};
const admin = async (method: string, path: string) => (await (await fetch(`${gw.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${gw.app.adminToken}` } })).json()) as any;
const windows = async () => ((await admin("GET", "/accounts")).accounts.find((a: any) => a.id === "oai-1").quota as Array<{ window: string; remaining?: number }>).map((q) => `${q.window} ${q.remaining}`);

test("the old key's late reply records no quota window after the reload: the account serves with its new key at once", async () => {
  const late = chat();
  await reached; // the call went out with the old key
  writeFileSync(gw.configPath, readFileSync(gw.configPath, "utf8").replace("env:OLD_KEY", "env:NEW_KEY"));
  expect((await admin("POST", "/config/reload")).changed).toBeDefined();
  release();
  expect(await late).toBe(200); // the client gets its reply as ever
  expect(await windows()).toEqual([]);
  gw.app.settle();
  gw.app.registry.loadState(await gw.app.store.loadAccountState()); // the next re-read of the store
  expect(await windows()).toEqual([]);
  gw.fake.reset();
  gw.fake.handle(handler);
  expect(await chat()).toBe(200); // not excluded by the old key's 1 % left
  expect(gw.fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${ENV.NEW_KEY}`]);
  expect(await windows()).toEqual(["requests 90"]); // the new key's own window is kept
});
