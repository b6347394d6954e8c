/**
 * A removed account/model pairing and a provider circuit written through to the embedded store on a full
 * disk (SPEC 6.3: both are kept across restarts through the store), as test/e2e/lock-write-retry.test.ts
 * does it for a lock: the write failed, the gateway carried on from memory, the next re-read of the state
 * (10 s) replaced memory with the store's rows (the removal or the open circuit gone, announced as
 * "restored elsewhere" / "closed elsewhere"), and a restart after space was freed had forgotten it. Now
 * such a write is written again before the next re-read (and at a stop), and holds in memory while it
 * waits (src/accounts/retry-writes.ts); one that keeps failing holds back no other row's write. The full
 * disk is the store's `removeModel` / `setCircuit` throwing SQLite's "database or disk is full".
 */
import { afterEach, expect, test } from "bun:test";
import { gatewayRestarts, postHi, type TestGateway } from "../support/gateway.ts";
import type { FakeReply } from "../support/fake-upstream.ts";
import type { GatewayEvent } from "../../src/events/bus.ts";

/** SPEC 6.3: 10 consecutive 5xx open the provider's circuit for 5 minutes. */
const THRESHOLD = 10;
const YAML = `
providers:
  - id: p
    kind: anthropic
    base_url: "{{FAKE}}/p"
accounts:
${Array.from({ length: THRESHOLD }, (_, i) => `  - { id: a${i + 1}, provider: p, api_key: env:KEY_A }`).join("\n")}
`;
/** Re-reads of the account state every 100 ms instead of 10 s. */
const env = { KEY_A: "sk-test-aaaaaaaa", SWITCHYARD_REREAD_MS: "100" };
const notFound: FakeReply = { status: 404, json: { type: "error", error: { type: "not_found_error", message: "model: claude-x" } } };
const e500: FakeReply = { status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } };

/** The test's gateways, restarted on one data directory beside one fake upstream. */
const gws = gatewayRestarts();
afterEach(() => gws.stop());

const post = async (url: string) => {
  const res = await postHi(url, "p/claude-x");
  return { status: res.status, text: await res.text() };
};

/** Makes the store's next `times` calls of `method` fail as on a full disk; `free()` makes room at once. */
function diskFullFor(g: TestGateway, method: "removeModel" | "setCircuit", times: number): { free(): void } {
  const store = g.app.store as unknown as Record<string, (...a: unknown[]) => unknown>;
  const real = store[method]!.bind(store);
  let left = times;
  store[method] = (...a: unknown[]) => {
    if (left-- > 0) throw new Error("database or disk is full");
    return real(...a);
  };
  return { free: () => void (left = 0) };
}
const admin = (g: TestGateway, path: string, body?: unknown) =>
  fetch(`${g.url}/admin/api${path}`, { method: "POST", headers: { authorization: `Bearer ${g.app.adminToken}`, "content-type": "application/json" }, body: JSON.stringify(body ?? {}) });
const stored = async (g: TestGateway) => {
  const s = await g.app.store.loadAccountState();
  return { removed: s.removedModels.map((r) => `${r.accountId} ${r.model}`), circuits: s.circuits.map((c) => c.providerId) };
};
const circuit = async (g: TestGateway) => {
  const res = await fetch(`${g.url}/admin/api/providers`, { headers: { authorization: `Bearer ${g.app.adminToken}` } });
  return ((await res.json()) as { providers: { id: string; circuit: { state: string } }[] }).providers.find((p) => p.id === "p")!.circuit.state;
};
/** The state changes published elsewhere-words ("restored elsewhere", "closed elsewhere"). */
const elsewhere = (events: GatewayEvent[]) => events.filter((e) => e.type === "account_state" && /elsewhere/.test((e as { reason?: string }).reason ?? ""));

test("a removed pairing whose write failed once is written at the next re-read, and a restart on the same data dir keeps it removed", async () => {
  const fake = await gws.upstream();
  fake.handle(() => notFound);
  let gw = await gws.start(YAML.replace(/\n {2}- \{ id: a([2-9]|10),.*/g, ""), { env });
  diskFullFor(gw, "removeModel", 1);
  expect([(await post(gw.url)).status, fake.requests.length]).toEqual([404, 1]);
  await Bun.sleep(400); // a few re-reads
  expect((await stored(gw)).removed).toEqual(["a1 claude-x"]);
  const again = await post(gw.url);
  expect(fake.requests.length).toBe(1); // the removed model is not asked of the account again
  await gw.stopGatewayOnly();
  gw = await gws.start(YAML.replace(/\n {2}- \{ id: a([2-9]|10),.*/g, ""), { env });
  const res = await post(gw.url);
  expect(fake.requests.length).toBe(1);
  expect(res).toEqual(again);
});

test("while the removed pairing's write keeps failing, re-reads keep it removed and announce nothing; a stop counts it lost", async () => {
  const fake = await gws.upstream();
  fake.handle(() => notFound);
  const gw = await gws.start(YAML.replace(/\n {2}- \{ id: a([2-9]|10),.*/g, ""), { env });
  const events: GatewayEvent[] = [];
  gw.app.bus.subscribe((e) => void events.push(e), ["account_state"]);
  diskFullFor(gw, "removeModel", 1_000_000);
  expect([(await post(gw.url)).status, fake.requests.length]).toEqual([404, 1]);
  await Bun.sleep(400); // a few re-reads, each retrying the write in vain
  expect((await stored(gw)).removed).toEqual([]);
  await post(gw.url);
  expect(fake.requests.length).toBe(1);
  expect(elsewhere(events)).toEqual([]);
  expect(await gw.app.shutdown(1000)).toBe(false);
  const lost = gw.logs.map((l) => JSON.parse(l) as { level: string; msg: string; state?: number }).find((l) => l.level === "error" && l.msg.startsWith("stopping while writes to "));
  expect(lost?.state).toBe(1);
});

test("an open circuit whose write failed once is written at the next re-read and stays open, also after a restart on the same data dir", async () => {
  const fake = await gws.upstream();
  fake.handle(() => e500);
  let gw = await gws.start(YAML, { env });
  const events: GatewayEvent[] = [];
  gw.app.bus.subscribe((e) => void events.push(e), ["account_state"]);
  diskFullFor(gw, "setCircuit", 1);
  // Ten accounts, a 500 from each in a row (each cools its account down and the request moves on): the circuit opens.
  for (let i = 0; i < 5 && (await circuit(gw)) !== "open"; i++) await post(gw.url);
  expect(await circuit(gw)).toBe("open");
  await Bun.sleep(400); // a few re-reads
  expect((await stored(gw)).circuits).toEqual(["p"]);
  expect(await circuit(gw)).toBe("open");
  expect(elsewhere(events)).toEqual([]);
  await gw.stopGatewayOnly();
  gw = await gws.start(YAML, { env });
  expect(await circuit(gw)).toBe("open");
});

test("while the circuit's write keeps failing, re-reads keep it open and announce no close; a stop counts it lost", async () => {
  const fake = await gws.upstream();
  fake.handle(() => e500);
  const gw = await gws.start(YAML, { env });
  const events: GatewayEvent[] = [];
  gw.app.bus.subscribe((e) => void events.push(e), ["account_state"]);
  diskFullFor(gw, "setCircuit", 1_000_000);
  for (let i = 0; i < 5 && (await circuit(gw)) !== "open"; i++) await post(gw.url);
  expect(await circuit(gw)).toBe("open");
  await Bun.sleep(400);
  expect((await stored(gw)).circuits).toEqual([]);
  expect(await circuit(gw)).toBe("open");
  expect(elsewhere(events)).toEqual([]);
  expect(await gw.app.shutdown(1000)).toBe(false);
  const lost = gw.logs.map((l) => JSON.parse(l) as { level: string; msg: string; state?: number }).find((l) => l.level === "error" && l.msg.startsWith("stopping while writes to "));
  // The circuit alone: the tenth account's cooldown, set after it, is another row's write and was written
  // (until session 43 it was queued behind the circuit's and lost with it: 2).
  expect(lost?.state).toBe(1);
});

test("a removal the store keeps refusing holds back no other row: the circuit opened after it is stored at once", async () => {
  const fake = await gws.upstream();
  // The first call a 404 (a1: its pairing of claude-x removed), then 500s.
  let calls = 0;
  fake.handle(() => (++calls === 1 ? notFound : e500));
  const gw = await gws.start(`${YAML}\n  - { id: a11, provider: p, api_key: env:KEY_A }\n`, { env });
  diskFullFor(gw, "removeModel", 1_000_000); // a1's removal: refused for good
  expect((await post(gw.url)).status).toBe(404);
  for (let i = 0; i < 5 && (await circuit(gw)) !== "open"; i++) await post(gw.url);
  expect(await circuit(gw)).toBe("open");
  // Until session 43 the circuit's write was queued behind the refused removal: neither was stored.
  expect(await stored(gw)).toEqual({ removed: [], circuits: ["p"] });
  await Bun.sleep(400); // re-reads: the removal still waits, the circuit stays stored and open
  expect(await stored(gw)).toEqual({ removed: [], circuits: ["p"] });
  expect(await circuit(gw)).toBe("open");
  expect(await gw.app.shutdown(1000)).toBe(false);
  const lost = gw.logs.map((l) => JSON.parse(l) as { level: string; msg: string; state?: number }).find((l) => l.level === "error" && l.msg.startsWith("stopping while writes to "));
  expect(lost?.state).toBe(1); // the removal alone
});

test("a restore by hand or a circuit closed by hand while the refused write waits holds once the disk has room: the waiting write is not written after it", async () => {
  const fake = await gws.upstream();
  // The first call a 404 (a1: its pairing of claude-x removed), then 500s.
  let calls = 0;
  fake.handle(() => (++calls === 1 ? notFound : e500));
  // An eleventh account: ten others to answer the 500s that open the circuit.
  const gw = await gws.start(`${YAML}\n  - { id: a11, provider: p, api_key: env:KEY_A }\n`, { env });
  const removals = diskFullFor(gw, "removeModel", 1_000_000);
  const openings = diskFullFor(gw, "setCircuit", 1_000_000);
  expect((await post(gw.url)).status).toBe(404);
  expect((await stored(gw)).removed).toEqual([]); // its write waits
  // The ten other accounts' 500s (each moves the request on, cooling its account): the circuit opens.
  for (let i = 0; i < 5 && (await circuit(gw)) !== "open"; i++) await post(gw.url);
  expect(await circuit(gw)).toBe("open");
  expect((await admin(gw, "/accounts/a1/restore", { model: "claude-x" })).status).toBe(200);
  expect((await admin(gw, "/providers/p/close-circuit")).status).toBe(200);
  removals.free();
  openings.free();
  await Bun.sleep(400); // re-reads, each first writing what waits
  expect(await stored(gw)).toEqual({ removed: [], circuits: [] });
  expect(await circuit(gw)).toBe("closed");
});
