/**
 * A removed account/model pairing (SPEC 6.3: a 404 model not found, a model-scoped 403) through the
 * real gateway: it lasts 24 h, also across a restart, then the model is tried on that account again;
 * `POST /admin/api/accounts/{id}/restore` and `switchyard accounts restore ID [MODEL]` end it now.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { realClock } from "../../src/clock.ts";
import type { Clock } from "../../pipeline/ports.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply, startFakeUpstream, type FakeReply, type FakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"], ["q", "openai-compatible"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
combos:
  - name: duo
    targets:
      - model: p/claude-x
      - model: q/glm-x
`;
const ENV = { KEY_A1: "sk-test-account-one" };
/** How long a removed pairing lasts (literal, not the code's constant): 24 h. */
const DAY_MS = 24 * 60 * 60_000;

/** The real clock, moved forward by `shift` (ms) when the test says so. */
const clock: Clock & { shift: number } = { shift: 0, now: () => Date.now() + clock.shift, sleep: realClock.sleep };

let fake: FakeUpstream;
let gw: TestGateway;
beforeAll(async () => {
  fake = await startFakeUpstream();
  gw = await startGateway(YAML, { env: ENV, fake, clock });
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  fake.reset();
  await gw.app.store.restoreModel("a1");
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
});

const who = (r: ReceivedRequest) => (r.headers["x-api-key"] === ENV.KEY_A1 ? "a1" : r.format === "openai-chat" ? "q" : "?");
const order = () => fake.requests.map(who);
/** a1 answers 404 model not found once, then normally. */
function notFoundOnce() {
  let left = 1;
  fake.handle((r): FakeReply => {
    if (who(r) === "a1" && left-- > 0) return { status: 404, json: { type: "error", error: { type: "not_found_error", message: "model: claude-x" } } };
    return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
  });
}
const duo = () =>
  fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "duo", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
/** Sends one request and returns which upstreams it reached. */
async function attempts(): Promise<string[]> {
  const before = fake.requests.length;
  expect((await duo()).status).toBe(200);
  return order().slice(before);
}
async function removeByNotFound() {
  notFoundOnce();
  expect(await attempts()).toEqual(["a1", "q"]);
  expect(await attempts()).toEqual(["q"]); // the pairing is removed: a1 is not asked for claude-x
}
const status = async () => ((await (await fetch(`${gw.url}/admin/api/accounts`)).json()) as { accounts: Array<{ id: string; removedModels: Array<{ model: string; until: number | null }> }> }).accounts.find((a) => a.id === "a1")!;
/** Runs the CLI from source against the gateway (not spawnSync: the gateway answers from this process). */
async function cli(args: string[]) {
  const r = Bun.spawn([...SOURCE_CLI, ...args, "--url", gw.url], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: gw.dataDir }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(r.stdout).text(), new Response(r.stderr).text(), r.exited]);
  return { code, out: out.trim(), err: err.trim() };
}

describe("a pairing removed by a 404", () => {
  test("lasts 24 h, then the model is tried on that account again", async () => {
    clock.shift = 0;
    const t0 = clock.now();
    await removeByNotFound();
    const removed = (await status()).removedModels;
    expect(removed.map((r) => r.model)).toEqual(["claude-x"]);
    expect(removed[0].until).toBeGreaterThanOrEqual(t0 + DAY_MS);
    expect(removed[0].until).toBeLessThan(t0 + DAY_MS + 60_000);
    clock.shift = DAY_MS - 60_000;
    expect(await attempts()).toEqual(["q"]);
    clock.shift = DAY_MS + 60_000;
    expect(await attempts()).toEqual(["a1"]);
    expect((await status()).removedModels).toEqual([]);
    clock.shift = 0;
  });

  test("POST /admin/api/accounts/a1/restore: the next request tries the model on a1 again; the store forgets the removal", async () => {
    await removeByNotFound();
    const res = await fetch(`${gw.url}/admin/api/accounts/a1/restore`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude-x" }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "a1", restored: ["claude-x"] });
    expect((await gw.app.store.loadAccountState()).removedModels).toEqual([]);
    expect(await attempts()).toEqual(["a1"]);
    const unknown = await fetch(`${gw.url}/admin/api/accounts/zz/restore`, { method: "POST" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain("No account zz");
  });

  test("switchyard accounts restore ID [MODEL]: restores, says what; unknown account exit 1; no ID exit 2", async () => {
    await removeByNotFound();
    const r = await cli(["accounts", "restore", "a1"]);
    expect(r).toMatchObject({ code: 0, out: "restored claude-x on account a1: tried again from the next request on" });
    expect(await attempts()).toEqual(["a1"]);
    expect(await cli(["accounts", "restore", "a1", "claude-x"])).toMatchObject({ code: 0, out: "account a1 had no removed pairing for claude-x; nothing to restore" });
    const unknown = await cli(["accounts", "restore", "zz"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("No account zz");
    expect((await cli(["accounts", "restore"])).code).toBe(2);
  });

  test("a restart within the 24 h keeps the removal", async () => {
    await removeByNotFound();
    await gw.stopGatewayOnly();
    gw = await startGateway(YAML, { env: ENV, fake, clock, dataDir: gw.dataDir });
    expect(await attempts()).toEqual(["q"]);
    expect((await status()).removedModels.map((r) => r.model)).toEqual(["claude-x"]);
  });
});
