/**
 * Several instances on one PostgreSQL (SPEC D-2) as an operator changes and stresses them: two real
 * `switchyard start --database postgres://…` processes (A and B, client keys required) on a throwaway
 * PostgreSQL and a fake upstream.
 * - A key created through A reaches B's live event stream (`keys_changed`), so a Keys page open on B follows it;
 *   a key disabled through A is refused by B (403 `key_disabled`) once announced, and served again once enabled;
 *   a removed account/model pairing restored through A reaches it as `model_restored`, and a cooldown or lock
 *   cleared elsewhere as `cooldown_end` / `unlock`, so an Accounts page on B drops them, a provider
 *   circuit opened or closed elsewhere as `circuit_open` / `circuit_closed` (each with its alert), and a
 *   credential quarantined or lifted elsewhere as `quarantine` / `unquarantine`;
 *   a combo stored through A reaches it as `routing_changed`, so a Routing page open on B follows it.
 * - An alias stored through A's admin API is served by B as soon as it is announced (it waited for B's
 *   10 s re-read), and its removal too. The instances' periodic re-read of stored objects is lengthened
 *   to 10 minutes (`SWITCHYARD_REREAD_MS`) so that only the announcement can carry the change (with the
 *   10 s default, B's re-read fell inside the 3 s window in ~30 % of runs without the fix).
 * - A key revoked without an announcement reaching B (B's LISTEN connection reconnects with a growing
 *   back-off after an outage) is refused by B at its next periodic re-read (it was accepted until then).
 * - A database that stops answering without closing its connections (tables locked) does not hold
 *   requests: a limited key's admission and a `max_concurrency` account's lease give up waiting and
 *   count locally (they waited for as long as the lock was held).
 * - A data directory that ran on the embedded store warns at its first start on PostgreSQL that the
 *   SQLite store's keys, accounts and objects stay behind (they silently vanished).
 * - During an outage the admin API answers 503 naming the cause (it answered a generic 500, or 400/409
 *   for key changes) while requests are still served.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openEvents } from "../support/admin-events.ts";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until as pollUntil } from "../support/until.ts";

const ENV = {
  UP_KEY: "sk-upstream-account",
  KEY_PLAIN: "sy-plain-client-key-0000000001",
  KEY_FRESH: "sy-fresh-limited-key-00000002",
};

let pg: TestPostgres;
let upstream: FakeUpstream;
let dbUrl: string;
let sql: SQL;
let a: Instance;
let b: Instance;

const chat = (inst: Instance, key: string, model = "up/gpt-x", signal?: AbortSignal) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
    signal,
  });
const admin = async (inst: Instance, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${inst.url}/admin/api${path}`, {
    ...init,
    headers: { "content-type": "application/json", authorization: `Bearer ${inst.instance().adminToken}`, ...(init.headers ?? {}) },
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** Polls every 100 ms until `cond` holds; fails after `ms`. */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string) => pollUntil(cond, ms, what, 100);

beforeAll(async () => {
  pg = await startPostgres();
  dbUrl = await pg.createDatabase("changes");
  sql = new SQL(dbUrl, { max: 2 });
  upstream = await startFakeUpstream();
  upstream.handle((r) =>
    r.model === "gpt-gone"
      ? { status: 404, json: { error: { message: "The model `gpt-gone` does not exist or you do not have access to it.", type: "invalid_request_error", code: "model_not_found" } } }
      : simpleReply(r.format!, { text: "hello", model: r.model }, r.stream),
  );
  const yaml = `server:
  require_api_key: true
providers:
  - id: up
    kind: openai
    base_url: "${upstream.url}/v1"
  - id: slots
    kind: openai
    base_url: "${upstream.url}/v1"
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
  - { id: slots-1, provider: slots, api_key: env:UP_KEY, max_concurrency: 2 }
keys:
  - name: plain
    key: env:KEY_PLAIN
  - name: fresh
    key: env:KEY_FRESH
    limits: { concurrency: 2 }
`;
  // Only announcements carry stored objects between the two (no periodic re-read within the tests).
  const start = () => startInstance({ yaml, env: { ...ENV, SWITCHYARD_REREAD_MS: "600000" }, args: ["--database", dbUrl], timeoutMs: 90_000 });
  [a, b] = await Promise.all([start(), start()]);
}, 180_000);

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await sql?.close();
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

/**
 * How long a test waits for an announcement to reach the other instance, ms: generous for a loaded
 * machine, and still far inside SWITCHYARD_REREAD_MS (10 min), so what arrives in time arrived by the
 * announcement, not by a periodic re-read.
 */
const ANNOUNCED_MS = 15_000;

describe("changes and stalls across two instances on one PostgreSQL (SPEC D-2)", () => {
  test("an alias stored through A is served by B once announced, and its removal too (not after B's 10 s re-read)", async () => {
    expect((await chat(b, ENV.KEY_PLAIN, "quick")).status).toBe(404);
    expect((await admin(a, "/aliases", { method: "POST", body: JSON.stringify({ name: "quick", target: "up/gpt-quick" }) })).status).toBe(201);
    await until(async () => (await chat(b, ENV.KEY_PLAIN, "quick")).status === 200, ANNOUNCED_MS, "B to serve the alias stored through A");
    expect(upstream.requests.at(-1)!.model).toBe("gpt-quick");
    expect((await admin(a, "/aliases/quick", { method: "DELETE" })).status).toBe(200);
    await until(async () => (await chat(b, ENV.KEY_PLAIN, "quick")).status === 404, ANNOUNCED_MS, "B to drop the alias deleted through A");
  }, 60_000);

  test("a combo stored through A reaches B's event stream as routing_changed (an open Routing page on B re-reads its lists)", async () => {
    const events = await openEvents(b.url, "?types=routing_changed", { authorization: `Bearer ${b.instance().adminToken}` });
    try {
      const combo = { name: "shared", strategy: "fallback", targets: [{ model: "up/gpt-quick" }] };
      expect((await admin(a, "/combos", { method: "POST", body: JSON.stringify(combo) })).status).toBe(201);
      const e = await events.waitFor((x) => x.event === "routing_changed", 5000);
      expect(e.data).toMatchObject({ type: "routing_changed", source: "stored", combos: { added: ["shared"] } });
      expect((await admin(a, "/combos/shared", { method: "DELETE" })).status).toBe(200);
    } finally {
      events.close();
    }
  }, 60_000);

  test("creates of one combo or alias name in parallel through A and B: one 201, the rest 409, and the database holds the one that got the 201 (newuser15 N8)", async () => {
    const post = (inst: Instance, path: string, body: unknown) => admin(inst, path, { method: "POST", body: JSON.stringify(body) });
    const models = ["up/race-a", "up/race-b", "up/race-c", "up/race-d", "up/race-e", "up/race-f"];
    const combos = await Promise.all(models.map((m, i) => post(i % 2 ? b : a, "/combos", { name: "racecombo", targets: [{ model: m }] })));
    const st = combos.map((r) => r.status);
    expect(st.filter((s) => s === 201)).toHaveLength(1);
    expect(st.filter((s) => s === 409)).toHaveLength(5);
    expect(combos[st.indexOf(409)]!.body.error).toMatchObject({ code: "conflict", param: "name" });
    const [row] = await sql`SELECT spec FROM stored_combos WHERE name = 'racecombo'`;
    expect(JSON.parse(row.spec).targets).toEqual([{ model: models[st.indexOf(201)] }]);

    const targets = ["up/alias-a", "up/alias-b", "up/alias-c", "up/alias-d"];
    const made = await Promise.all([
      ...targets.map((target, i) => post(i % 2 ? b : a, "/aliases", { name: "racealias", target })),
      post(b, "/combos", { name: "racealias", targets: [{ model: "up/alias-combo" }] }),
    ]);
    const st2 = made.map((r) => r.status);
    expect(st2.filter((s) => s === 201)).toHaveLength(1);
    expect(st2.filter((s) => s === 409)).toHaveLength(4);
    const aliases = await sql`SELECT target FROM stored_aliases WHERE name = 'racealias'`;
    const asCombo = await sql`SELECT name FROM stored_combos WHERE name = 'racealias'`;
    if (st2[4] === 201) expect([aliases.length, asCombo.length]).toEqual([0, 1]);
    else expect([aliases.map((r: any) => r.target), asCombo.length]).toEqual([[targets[st2.indexOf(201)]], 0]);
    await sql`DELETE FROM stored_combos WHERE name IN ('racecombo', 'racealias')`;
    await sql`DELETE FROM stored_aliases WHERE name = 'racealias'`;
  }, 60_000);

  test("a key created through A reaches B's event stream as keys_changed (an open Keys page on B re-reads its list)", async () => {
    const events = await openEvents(b.url, "?types=keys_changed", { authorization: `Bearer ${b.instance().adminToken}` });
    try {
      expect((await admin(a, "/keys", { method: "POST", body: JSON.stringify({ name: "desk" }) })).status).toBe(201);
      const e = await events.waitFor((x) => x.event === "keys_changed", 5000);
      expect(e.data).toMatchObject({ type: "keys_changed", change: "changed" });
      expect((await admin(b, "/keys")).body.keys.map((k: { name: string }) => k.name)).toContain("desk");
    } finally {
      events.close();
    }
  }, 60_000);

  test("a key disabled through A is refused by B (403 key_disabled) once announced, and served by B again once enabled (G16)", async () => {
    const made = await admin(a, "/keys", { method: "POST", body: JSON.stringify({ name: "pausable" }) });
    expect(made.status).toBe(201);
    const secret = made.body.secret as string;
    await until(async () => (await chat(b, secret)).status === 200, ANNOUNCED_MS, "B to serve the key created through A");
    const off = await admin(a, "/keys/pausable/disable", { method: "POST" });
    expect(off).toMatchObject({ status: 200, body: { name: "pausable", disabled: true } });
    await until(async () => (await chat(b, secret)).status === 403, ANNOUNCED_MS, "B to refuse the key disabled through A");
    const refused = (await (await chat(b, secret)).json()) as any;
    expect(refused.error).toMatchObject({ code: "key_disabled", type: "permission_error" });
    expect((await admin(b, "/keys")).body.keys.find((k: any) => k.name === "pausable").disabledAt).toBe(off.body.disabledAt);
    expect((await admin(a, "/keys/pausable/enable", { method: "POST" })).body).toEqual({ name: "pausable", disabled: false });
    await until(async () => (await chat(b, secret)).status === 200, ANNOUNCED_MS, "B to serve the key enabled through A");
  }, 60_000);

  test("a pairing removed on B and restored through A leaves B's event stream as model_restored (an open Accounts page on B drops it)", async () => {
    const removed = async (inst: Instance) => (await admin(inst, "/accounts")).body.accounts.find((x: { id: string }) => x.id === "up-1").removedModels.map((r: { model: string }) => r.model);
    expect((await chat(b, ENV.KEY_PLAIN, "up/gpt-gone")).status).toBe(404);
    await until(async () => (await removed(a)).includes("gpt-gone"), ANNOUNCED_MS, "A to see the pairing B removed");
    const events = await openEvents(b.url, "?types=account_state", { authorization: `Bearer ${b.instance().adminToken}` });
    try {
      expect((await admin(a, "/accounts/up-1/restore", { method: "POST", body: JSON.stringify({ model: "gpt-gone" }) })).body).toEqual({ id: "up-1", restored: ["gpt-gone"] });
      const e = await events.waitFor((x) => x.event === "account_state" && x.data.change === "model_restored", ANNOUNCED_MS);
      expect(e.data).toMatchObject({ account: "up-1", provider: "up", model: "gpt-gone", reason: "restored elsewhere" });
      expect(await removed(b)).toEqual([]);
    } finally {
      events.close();
    }
  }, 60_000);

  test("a cooldown and a lock cleared through another instance leave B's event stream as cooldown_end and unlock (an open Accounts page on B drops them)", async () => {
    const status = async () => (await admin(b, "/accounts")).body.accounts.find((x: { id: string }) => x.id === "slots-1");
    // What another instance's store writes for a 429 and a 401, then for a success there and a new
    // login (src/store/postgres/account-state.ts), each followed by its announcement.
    const announce = () => sql`SELECT pg_notify('switchyard_changes', ${JSON.stringify({ i: "another-instance", k: "state" })})`;
    const clear = async () => {
      await sql`DELETE FROM cooldowns WHERE account_id = 'slots-1'`;
      await sql`DELETE FROM account_locks WHERE account_id = 'slots-1'`;
    };
    const now = Date.now();
    await sql`INSERT INTO cooldowns (account_id, model, until, reason, level, since) VALUES ('slots-1', 'gpt-x', ${now + 600_000}, '429 rate limited', 1, ${now})`;
    await sql`INSERT INTO account_locks (account_id, until, reason, since) VALUES ('slots-1', NULL, '401 invalid credential', ${now})`;
    try {
      await announce();
      await until(async () => ((s) => s.cooldowns.length === 1 && s.lock !== undefined)(await status()), ANNOUNCED_MS, "B to see the cooldown and the lock");
      const events = await openEvents(b.url, "?types=account_state", { authorization: `Bearer ${b.instance().adminToken}` });
      try {
        await clear();
        await announce();
        const ended = await events.waitFor((x) => x.data.change === "cooldown_end", ANNOUNCED_MS);
        const unlocked = await events.waitFor((x) => x.data.change === "unlock", ANNOUNCED_MS);
        expect(ended.data).toMatchObject({ account: "slots-1", provider: "slots", model: "gpt-x", reason: "cooldown (429 rate limited) cleared elsewhere" });
        expect(unlocked.data).toMatchObject({ account: "slots-1", provider: "slots", reason: "lock (401 invalid credential) cleared elsewhere" });
        const after = await status();
        expect([after.cooldowns, after.lock]).toEqual([[], undefined]);
      } finally {
        events.close();
      }
    } finally {
      await clear();
    }
  }, 60_000);

  test("a provider circuit opened, then closed, through another instance leaves B's event stream as circuit_open and circuit_closed, each with its alert (an open dashboard on B follows it)", async () => {
    const circuit = async () => (await admin(b, "/providers")).body.providers.find((x: { id: string }) => x.id === "slots").circuit.state;
    // What another instance's store writes when 10 consecutive 5xx open the circuit, then when a request
    // succeeds there (src/store/postgres/account-state.ts), each followed by its announcement.
    const announce = () => sql`SELECT pg_notify('switchyard_changes', ${JSON.stringify({ i: "another-instance", k: "state" })})`;
    const clear = () => sql`DELETE FROM provider_circuits WHERE provider_id = 'slots'`;
    const now = Date.now();
    const events = await openEvents(b.url, "?types=account_state,alert", { authorization: `Bearer ${b.instance().adminToken}` });
    try {
      await sql`INSERT INTO provider_circuits (provider_id, open_until, reason, since) VALUES ('slots', ${now + 300_000}, '10 consecutive 5xx', ${now})`;
      await announce();
      const opened = await events.waitFor((x) => x.event === "account_state" && x.data.change === "circuit_open", ANNOUNCED_MS);
      expect(opened.data).toMatchObject({ account: "slots-1", provider: "slots", reason: "circuit (10 consecutive 5xx) opened elsewhere", until: now + 300_000 });
      const openAlert = await events.waitFor((x) => x.event === "alert" && x.data.event === "circuit_open", ANNOUNCED_MS);
      expect(openAlert.data).toMatchObject({ subject: "provider:slots", detail: { reason: "circuit (10 consecutive 5xx) opened elsewhere" } });
      expect(await circuit()).toBe("open");
      await clear();
      await announce();
      const closed = await events.waitFor((x) => x.event === "account_state" && x.data.change === "circuit_closed", ANNOUNCED_MS);
      expect(closed.data).toMatchObject({ account: "slots-1", provider: "slots", reason: "circuit (10 consecutive 5xx) closed elsewhere" });
      const alert = await events.waitFor((x) => x.event === "alert" && x.data.event === "circuit_closed", ANNOUNCED_MS);
      expect(alert.data).toMatchObject({ subject: "provider:slots", detail: { reason: "circuit (10 consecutive 5xx) closed elsewhere" } });
      expect(await circuit()).toBe("closed");
    } finally {
      events.close();
      await clear();
    }
  }, 60_000);

  test("a credential quarantined, then lifted, through another instance leaves B's event stream as quarantine and unquarantine (an open Accounts page on B drops it)", async () => {
    // What another instance's store writes when the credential is rejected after a refresh, then when a
    // login or import of it lifts the quarantine (src/store/postgres/account-state.ts), each announced.
    const fingerprint = new Bun.CryptoHasher("sha256").update(ENV.UP_KEY).digest("hex");
    const announce = () => sql`SELECT pg_notify('switchyard_changes', ${JSON.stringify({ i: "another-instance", k: "state" })})`;
    const lift = () => sql`DELETE FROM quarantined_credentials WHERE fingerprint = ${fingerprint}`;
    const quarantined = async () => ((await admin(b, "/accounts")).body.accounts.find((x: { id: string }) => x.id === "slots-1").reasons as string[]).some((r) => r.startsWith("credential quarantined ("));
    const events = await openEvents(b.url, "?types=account_state,alert", { authorization: `Bearer ${b.instance().adminToken}` });
    try {
      await sql`INSERT INTO quarantined_credentials (fingerprint, account_id, reason, since) VALUES (${fingerprint}, 'slots-1', 'invalid_grant after a refresh', ${Date.now()})`;
      await announce();
      const held = await events.waitFor((x) => x.event === "account_state" && x.data.change === "quarantine" && x.data.account === "slots-1", ANNOUNCED_MS);
      expect(held.data).toMatchObject({ provider: "slots", reason: "invalid_grant after a refresh" });
      expect(await quarantined()).toBe(true);
      await lift();
      await announce();
      const lifted = await events.waitFor((x) => x.event === "account_state" && x.data.change === "unquarantine" && x.data.account === "slots-1", ANNOUNCED_MS);
      expect(lifted.data).toMatchObject({ provider: "slots", reason: "quarantine (invalid_grant after a refresh) lifted elsewhere" });
      expect(await quarantined()).toBe(false);
    } finally {
      events.close();
      await lift();
      await announce();
    }
  }, 60_000);

  test("a key revoked without an announcement reaching B is refused by B at its next re-read", async () => {
    const created = await admin(a, "/keys", { method: "POST", body: JSON.stringify({ name: "laptop" }) });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    await until(async () => (await chat(b, secret)).status === 200, ANNOUNCED_MS, "B to accept the new key");
    // What A's revocation does in the database, without its NOTIFY (B's LISTEN connection was away).
    await sql`UPDATE client_keys SET revoked_at = ${Date.now()} WHERE name = 'laptop'`;
    await until(async () => (await chat(b, secret)).status === 401, 5000, "B to refuse the revoked key");
    await until(async () => (await chat(a, secret)).status === 401, 5000, "A to refuse the revoked key");
  }, 60_000);

  test("locked tables do not hold requests: a limited key and a max_concurrency account count locally until the database answers", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    let lockHeld = true;
    const lock = sql
      .begin(async (tx) => {
        await tx`LOCK TABLE quota_shares, leases IN ACCESS EXCLUSIVE MODE`;
        locked();
        await held;
      })
      .finally(() => {
        lockHeld = false;
      });
    await isLocked;
    try {
      const signal = AbortSignal.timeout(20_000);
      // `fresh` has no share on B yet (its first request asks the database); slots-1 takes a lease per request.
      const [limited, leased] = await Promise.all([chat(b, ENV.KEY_FRESH, "up/gpt-x", signal), chat(b, ENV.KEY_PLAIN, "slots/gpt-x", signal)]);
      expect([limited.status, leased.status, lockHeld]).toEqual([200, 200, true]);
      expect((await chat(b, ENV.KEY_FRESH, "up/gpt-x", signal)).status).toBe(200);
    } finally {
      release();
      await lock;
    }
    expect([...b.stdout, ...b.stderr].some((l) => l.includes("client key limits are counted by this instance alone"))).toBe(true);
    // The database answers again: both are served, and no lease of B stays behind once they ended.
    expect((await chat(b, ENV.KEY_FRESH)).status).toBe(200);
    expect((await chat(b, ENV.KEY_PLAIN, "slots/gpt-x")).status).toBe(200);
    await until(async () => Number((await sql`SELECT count(*)::int AS n FROM leases WHERE scope = 'account:slots-1'`)[0].n) === 0, 5000, "no lease left behind");
  }, 90_000);

  test("an instance moved from the embedded store to PostgreSQL says that the SQLite store's keys stay behind", async () => {
    const yaml = `providers:\n  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }\n`;
    const before = await startInstance({ yaml, env: ENV });
    let moved: Instance | undefined;
    try {
      expect((await admin(before, "/keys", { method: "POST", body: JSON.stringify({ name: "from-sqlite" }) })).status).toBe(201);
      await stopInstance(before);
      moved = await startInstance({ yaml, env: ENV, dataDir: before.dataDir, args: ["--database", dbUrl], timeoutMs: 90_000 });
      const lines = [...moved.stdout, ...moved.stderr].flatMap((l) => {
        try {
          return [JSON.parse(l)];
        } catch {
          return []; // not a log line
        }
      });
      const warning = lines.find((l) => l.level === "warn" && String(l.msg).includes("embedded SQLite store"));
      expect(warning?.path).toBe(`${before.dataDir}/switchyard.db`);
      expect(warning?.msg).toContain("not copied");
      expect(((await admin(moved, "/keys")).body.keys as any[]).some((k) => k.name === "from-sqlite")).toBe(false);
    } finally {
      await stopInstance(before);
      await stopInstance(moved);
    }
  }, 90_000);

  test("during an outage the admin API says the database is away (503), serving goes on, and it answers again after", async () => {
    await pg.stop();
    try {
      expect((await chat(b, ENV.KEY_PLAIN)).status).toBe(200);
      await until(async () => ((await (await fetch(`${b.url}/health`)).json()) as any).db === "unreachable", 10_000, "B to notice the outage");
      const reads = await Promise.all(["/usage?by=model", "/calls?limit=5", "/keys"].map((p) => admin(b, p)));
      const change = await admin(b, "/keys", { method: "POST", body: JSON.stringify({ name: "during-outage" }) });
      const revoke = await admin(b, "/keys/plain-db", { method: "DELETE" });
      const alias = await admin(b, "/aliases", { method: "POST", body: JSON.stringify({ name: "later", target: "up/gpt-later" }) });
      for (const r of [...reads, change, revoke, alias]) {
        expect([r.status, r.body.error?.type, r.body.error?.message]).toEqual([503, "unavailable_error", "the database cannot be reached, so this was not done; requests are still served from memory: try again when it answers"]);
      }
    } finally {
      await pg.start();
    }
    await until(async () => ((await (await fetch(`${b.url}/health`)).json()) as any).db === "ok", 30_000, "B to reconnect");
    expect((await admin(b, "/usage?by=model")).status).toBe(200);
  }, 90_000);
});
