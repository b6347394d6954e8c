/**
 * An account's lock written through to the embedded store on a full disk (SPEC 6.3 locks hold across
 * restarts): the write failed, the gateway carried on from memory, the next re-read of the state (10 s)
 * replaced memory with the store's rows (no lock), and a restart after space was freed had forgotten the
 * lock: the rejected key was sent upstream again. Now a refused lock or cooldown write is written again
 * before the next re-read (and at a stop), and holds in memory while it waits (src/accounts/retry-writes.ts).
 * The full disk is the store's `setLock` throwing SQLite's "database or disk is full".
 */
import { afterEach, expect, test } from "bun:test";
import { gatewayRestarts, postHi, type TestGateway } from "../support/gateway.ts";
import type { FakeReply } from "../support/fake-upstream.ts";
import type { AccountLock } from "../../src/store/types.ts";

const YAML = `
providers:
  - id: p
    kind: anthropic
    base_url: "{{FAKE}}/p"
accounts:
  - { id: a, provider: p, api_key: env:KEY_A }
`;
/** Re-reads of the account state every 100 ms instead of 10 s. */
const env = { KEY_A: "sk-test-aaaaaaaa", SWITCHYARD_REREAD_MS: "100" };
const rejected: FakeReply = { status: 401, json: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } };

/** The test's gateways, restarted on one data directory beside one fake upstream. */
const gws = gatewayRestarts();
afterEach(() => gws.stop());

const post = (url: string) => postHi(url, "p/claude-x");

/** Makes the store's next `times` lock writes fail as on a full disk. */
function diskFullForLocks(g: TestGateway, times: number): void {
  const store = g.app.store;
  const setLock = store.setLock.bind(store);
  let left = times;
  store.setLock = (l: AccountLock) => {
    if (left-- > 0) throw new Error("database or disk is full");
    return setLock(l);
  };
}
const storedLocks = async (g: TestGateway) => (await g.app.store.loadAccountState()).locks.map((l) => l.accountId);

test("a lock whose write failed once is written at the next re-read, and a restart on the same data dir keeps the account locked", async () => {
  const fake = await gws.upstream();
  fake.handle(() => rejected);
  let gw = await gws.start(YAML, { env });
  diskFullForLocks(gw, 1);
  const first = await post(gw.url);
  expect([first.status, fake.requests.length]).toEqual([503, 1]); // the key rejected upstream: the account is locked until its key changes
  await Bun.sleep(400); // a few re-reads
  expect(await storedLocks(gw)).toEqual(["a"]);
  await gw.stopGatewayOnly();
  gw = await gws.start(YAML, { env });
  const res = await post(gw.url);
  expect(fake.requests.length).toBe(1); // the locked account's rejected key is not sent again
  expect(res.status).toBe(503);
  expect(await res.text()).toContain("locked");
});

test("while the lock's write keeps failing, re-reads of the state keep the lock in memory", async () => {
  const fake = await gws.upstream();
  fake.handle(() => rejected);
  const gw = await gws.start(YAML, { env });
  diskFullForLocks(gw, 1_000_000);
  const first = await post(gw.url);
  expect([first.status, fake.requests.length]).toEqual([503, 1]); // the key rejected upstream: the account is locked until its key changes
  await Bun.sleep(400); // a few re-reads, each retrying the write in vain
  expect(await storedLocks(gw)).toEqual([]);
  const res = await post(gw.url);
  expect(fake.requests.length).toBe(1);
  expect(res.status).toBe(503);
  // A stop while it still cannot be written: counted lost with the state changes, and the stop fails (exit 1).
  expect(await gw.app.shutdown(1000)).toBe(false);
  const lost = gw.logs.map((l) => JSON.parse(l) as { level: string; msg: string; state?: number }).find((l) => l.level === "error" && l.msg.startsWith("stopping while writes to "));
  expect(lost?.state).toBe(1);
  expect(lost?.msg).toContain("1 routing/budget state changes");
});
