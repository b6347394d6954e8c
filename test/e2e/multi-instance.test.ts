/**
 * Several instances on one PostgreSQL behave as one gateway (SPEC D-2), end to end: two real
 * `switchyard start --database postgres://…` processes (A and B) on a throwaway PostgreSQL, a scriptable
 * fake upstream and a fake OAuth vendor. The scenarios run in order on the same pair: a 429 through A
 * is honoured by B, conversations bound through A stay on their accounts through B, 20 parallel 401s
 * over A and B cause one refresh, a max_concurrency 1 account is never used twice at once, a key's rpm
 * limit counts requests through both, usage and calls agree on both, SIGKILL of A loses nothing
 * written, and a stopped and restarted database is survived. No step waits a fixed time for the other
 * instance: each polls what that instance shows (its account state, its calls) or what the database
 * holds until the change has arrived, with a deadline far beyond SPEC D-2's 1 s (see
 * {@link ANNOUNCED_MS}); none depends on where in a minute it runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { startFakeVendor, vendorProviders, type FakeVendor } from "../oauth/fake-oauth.ts";
import { simpleReply, startFakeUpstream, type FakeUpstream, type ReceivedRequest } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";

const ENV = {
  KEY_RL1: "sk-rl-one",
  KEY_RL2: "sk-rl-two",
  KEY_AFF1: "sk-aff-one",
  KEY_AFF2: "sk-aff-two",
  KEY_ONE: "sk-one",
  KEY_DBO1: "sk-dbo-one",
  KEY_DBO2: "sk-dbo-two",
  KEY_LIM1: "sk-lim-one",
  CLIENT_CI: "sy-client-key-of-ci-with-rpm-4",
  CLIENT_CI2: "sy-client-key-of-ci-2-with-rpm-4",
  CLIENT_CI3: "sy-client-key-of-ci-3-with-rpm-4",
};
const WHO: Record<string, string> = Object.fromEntries(Object.entries(ENV).map(([k, v]) => [v, k.slice(4).toLowerCase().replace(/(\d)$/, "-$1")]));
/** The client keys with `rpm: 4` (name, secret): one per round of the rpm test (see there). */
const RPM_KEYS: Array<[string, string]> = [
  ["ci", ENV.CLIENT_CI],
  ["ci-2", ENV.CLIENT_CI2],
  ["ci-3", ENV.CLIENT_CI3],
];
/** Requests the rpm test had served (account `lim-1`), for the usage test's count. */
let rpmServed = 0;
/** Conversations the affinity test bound through A (each sent twice: through A, then through B), for the usage test's count. */
let conversations = 8;

let pg: TestPostgres;
let upstream: FakeUpstream;
let vendor: FakeVendor;
let dbUrl: string;
let yaml: string;
let a: Instance;
let b: Instance;

/** Which account a request reached: `rl-1`, `aff-2`, `one`… from its API key, or `cc` for the vendor. */
const who = (r: ReceivedRequest) => WHO[r.headers["x-api-key"] ?? ""] ?? (r.path.startsWith("/cc") ? "cc" : "?");

/**
 * B's periodic re-reads (the safety net under LISTEN/NOTIFY: account state and client keys every 2 s,
 * accounts every 10 s) lengthened to 10 minutes: within a test only an announcement carries A's
 * changes to B.
 */
const B_ENV = { SWITCHYARD_RESYNC_MS: "600000", SWITCHYARD_REREAD_MS: "600000" };

/**
 * How long B may take to honour a change written through A (SPEC D-2: "within 1 s", by write-through
 * and LISTEN/NOTIFY). Far beyond 1 s, so that a loaded machine does not fail it, and far inside B's
 * lengthened re-reads ({@link B_ENV}): what B honours in time it learned from the announcement, which
 * is sent as the change is written (bindings: at A's next flush, at most 1 s later) and waits on no
 * timer of B's. A change that is not announced is never honoured here.
 */
const ANNOUNCED_MS = 15_000;

function start(env: Record<string, string> = {}): Promise<Instance> {
  return startInstance({ yaml, env: { ...ENV, ...env }, args: ["--database", dbUrl], timeoutMs: 90_000 });
}

const post = (inst: Instance, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${inst.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const msg = (model: string, text = "hi") => ({ model, max_tokens: 30, messages: [{ role: "user", content: text }] });
const admin = async (inst: Instance, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${inst.url}/admin/api${path}`, { ...init, headers: { "content-type": "application/json", ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any };
};

/** An instance's live account state (`GET /admin/api/accounts`), by account id. */
async function accounts(inst: Instance): Promise<Record<string, any>> {
  return Object.fromEntries(((await admin(inst, "/accounts")).body.accounts as any[]).map((x) => [x.id, x]));
}

/** Whether `inst` holds a cooldown of `account` (for any model). */
const cooling = async (inst: Instance, account: string) => ((await accounts(inst))[account]?.cooldowns?.length ?? 0) > 0;

/** The request ids of the calls `inst` lists (its own and the other instance's, from the database). */
const callIds = async (inst: Instance, limit = 200) => new Set(((await admin(inst, `/calls?limit=${limit}`)).body.calls as any[]).map((c) => c.requestId as string));

/**
 * The shares the instances hold of client key `name`'s rpm pool in the database, one per instance and
 * minute window (`window`: its start, ms on the database's clock; `used`: the requests that instance
 * counted there, as last reported), ordered by window: src/limits/shared-counters.ts over the
 * `quota_shares` table. A share is granted before a request is counted, so every window in which an
 * instance admitted a request of the key is listed.
 */
async function rpmShares(sql: SQL, name: string): Promise<Array<{ window: number; used: number }>> {
  const rows = await sql`SELECT window_start, used FROM quota_shares WHERE name = ${`key:${name}:rpm`} AND granted > 0 ORDER BY window_start, instance_id`;
  return (rows as any[]).map((r) => ({ window: Number(r.window_start), used: Number(r.used) }));
}

beforeAll(async () => {
  pg = await startPostgres();
  dbUrl = await pg.createDatabase("multi");
  upstream = await startFakeUpstream();
  vendor = await startFakeVendor(upstream);
  upstream.handle((r) => simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream));
  yaml = `${vendorProviders(vendor.url)}
  - id: rl
    kind: anthropic
    base_url: "${upstream.url}/rl"
  - id: aff
    kind: anthropic
    base_url: "${upstream.url}/aff"
  - id: one
    kind: anthropic
    base_url: "${upstream.url}/one"
  - id: dbo
    kind: anthropic
    base_url: "${upstream.url}/dbo"
  - id: lim
    kind: anthropic
    base_url: "${upstream.url}/lim"
accounts:
  - { id: rl-1, provider: rl, api_key: env:KEY_RL1 }
  - { id: rl-2, provider: rl, api_key: env:KEY_RL2 }
  - { id: aff-1, provider: aff, api_key: env:KEY_AFF1 }
  - { id: aff-2, provider: aff, api_key: env:KEY_AFF2 }
  - { id: one, provider: one, api_key: env:KEY_ONE, max_concurrency: 1 }
  - { id: dbo-1, provider: dbo, api_key: env:KEY_DBO1 }
  - { id: dbo-2, provider: dbo, api_key: env:KEY_DBO2 }
  - { id: lim-1, provider: lim, api_key: env:KEY_LIM1 }
keys:
  - name: ci
    key: env:CLIENT_CI
    limits: { rpm: 4 }
  - { name: ci-2, key: env:CLIENT_CI2, limits: { rpm: 4 } }
  - { name: ci-3, key: env:CLIENT_CI3, limits: { rpm: 4 } }
settings:
  account_strategy: random
`;
  [a, b] = await Promise.all([start(), start(B_ENV)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await vendor?.stop();
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

describe("two instances on one PostgreSQL (SPEC D-2)", () => {
  test("a 429 with Retry-After through A is honoured by B within 1 s (by the announcement)", async () => {
    upstream.reset();
    let limited: string | undefined;
    upstream.handle((r) => {
      if (!limited && r.path.startsWith("/rl")) {
        limited = who(r);
        return { status: 429, headers: { "retry-after": "120" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
      }
      return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
    });
    expect((await post(a, msg("rl/claude-x"))).status).toBe(200);
    expect(limited).toMatch(/^rl-[12]$/);
    // Written through and announced: B holds the cooldown without waiting for a re-read of its own.
    await until(() => cooling(b, limited!), ANNOUNCED_MS, `B to hold ${limited}'s cooldown written through A`);
    upstream.reset();
    for (let i = 0; i < 8; i++) expect((await post(b, msg("rl/claude-x"))).status).toBe(200);
    expect(upstream.requests.map(who)).toEqual(Array(8).fill(limited === "rl-1" ? "rl-2" : "rl-1"));
  }, 60_000);

  test("conversations bound through A stay on their accounts through B", async () => {
    upstream.reset();
    upstream.handle((r) => simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream));
    const bound = new Map<string, string>();
    // The random strategy spreads new conversations over both accounts: at least eight, and more until
    // both accounts hold one (eight landed on one account in 1 of 128 runs; 32 all on one: 1 in 2^31).
    for (let i = 0; i < 32 && (i < 8 || new Set(bound.values()).size < 2); i++) {
      const res = await post(a, msg("aff/claude-x", `conversation ${i}`), { "x-session-id": `conv-${i}` });
      expect(res.status).toBe(200);
      bound.set(`conv-${i}`, who(upstream.requests.at(-1)!));
    }
    expect(new Set(bound.values()).size).toBe(2);
    conversations = bound.size;
    // Bindings are buffered (flushed within 1 s), then announced: B holds the same bindings of both
    // accounts as A (at least the eight conversations').
    const bindings = async (inst: Instance) => {
      const acc = await accounts(inst);
      return [acc["aff-1"].bindings as number, acc["aff-2"].bindings as number];
    };
    await until(
      async () => {
        const [onA, onB] = await Promise.all([bindings(a), bindings(b)]);
        return onA[0]! + onA[1]! >= bound.size && onB[0] === onA[0] && onB[1] === onA[1];
      },
      ANNOUNCED_MS,
      "B to hold the bindings made through A",
    );
    upstream.reset();
    for (const [conv, account] of bound) {
      expect((await post(b, msg("aff/claude-x", `${conv} again`), { "x-session-id": conv })).status).toBe(200);
      expect([conv, who(upstream.requests.at(-1)!)]).toEqual([conv, account]);
    }
  }, 60_000);

  test("20 parallel requests over A and B that see a 401 cause exactly one token refresh", async () => {
    upstream.reset();
    const t = vendor.seed({ name: "team", models: ["claude-x"] });
    const added = await admin(a, "/accounts", {
      method: "POST",
      body: JSON.stringify({ provider: "cc", id: "cc-team", credential: { type: "oauth", access_token: t.accessToken, refresh_token: t.refreshToken, expires_at: Date.now() + 3_600_000 } }),
    });
    expect(added.status).toBe(201);
    // B learns about the new account through the database.
    await until(async () => (await post(b, msg("cc/claude-x"))).status === 200, ANNOUNCED_MS, "B to serve the new account");
    // The POST also started A's model discovery of the account in the background (a call with the token
    // about to be revoked, then the list stored and re-read): wait until both instances list the model
    // it found, so the parallel requests are the only users of the token.
    const discovered = async (inst: Instance) => ((await accounts(inst))["cc-team"]?.models ?? []).some((m: any) => m.model === "claude-x");
    await until(async () => (await discovered(a)) && (await discovered(b)), ANNOUNCED_MS, "A's discovery of cc-team's models to reach A and B").catch(async (e) => {
      // Say which part did not arrive: A's discovery (its call to the vendor, its list) or B's re-read.
      const calls = vendor.calls.filter((c) => c.path.startsWith("/v1/models") && c.login === "team").length;
      throw new Error(`${(e as Error).message} (cc-team's model list asked of the vendor: ${calls} times; lists it on A: ${await discovered(a)}, on B: ${await discovered(b)})`);
    });
    const before = vendor.refreshCalls.length;
    vendor.revokeAccess(t.accessToken);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i % 2 ? b : a, msg("cc/claude-x", `parallel ${i}`))));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(vendor.refreshCalls.slice(before)).toEqual([t.refreshToken]);
    // Both instances now use the rotated token.
    const rotated = vendor.calls.filter((c) => c.path.startsWith("/v1/messages")).at(-1)!.token;
    expect(rotated).not.toBe(t.accessToken);
    expect(vendor.loginOf(rotated)).toBe("team");
  }, 90_000);

  test("a max_concurrency 1 account is not used twice at once across instances", async () => {
    upstream.reset();
    let inflight = 0;
    let most = 0;
    upstream.handle(async (r) => {
      if (who(r) === "one") {
        inflight++;
        most = Math.max(most, inflight);
        await Bun.sleep(400);
        inflight--;
      }
      return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
    });
    const res = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 ? b : a, msg("one/claude-x", `slot ${i}`))));
    expect(res.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(upstream.requests.filter((r) => who(r) === "one").length).toBe(6);
    expect(most).toBe(1);
  }, 60_000);

  test("a key's rpm limit counts requests through both instances, in the database", async () => {
    upstream.handle((r) => simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream));
    // rpm counts in fixed minute windows of the database's clock. In which window the instances counted
    // a round's requests is read back from the database (their shares of the key's pool, one row per
    // instance and window): a round inside one window is checked exactly; a round the minute turned
    // during (shares in two windows) runs again with a fresh key of the same limit. So where in the
    // minute the test starts does not matter, and nothing waits for a minute to begin; a second round
    // could only straddle too if it lasted a minute.
    const sql = new SQL(dbUrl, { max: 1 });
    try {
      for (const [name, secret] of RPM_KEYS) {
        upstream.reset();
        const statuses: number[] = [];
        const retryAfter: number[] = [];
        for (let i = 0; i < 6; i++) {
          const res = await post(i % 2 ? b : a, msg("lim/claude-x", `limited ${i}`), { "x-api-key": secret });
          statuses.push(res.status);
          if (res.status === 429) retryAfter.push(Number(res.headers.get("retry-after")));
        }
        rpmServed += upstream.requests.length;
        if (new Set((await rpmShares(sql, name)).map((s) => s.window)).size > 1) continue;
        // rpm 4: two requests through A and two through B, then refused on both until the window ends.
        expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
        expect(upstream.requests.length).toBe(4);
        for (const s of retryAfter) expect(s > 0 && s <= 60).toBe(true);
        // The count both went by is the database's: A's two and B's two, each reported there within a second.
        await until(async () => (await rpmShares(sql, name)).reduce((n, s) => n + s.used, 0) >= 4, ANNOUNCED_MS, `the database to hold ${name}'s four requests`);
        expect((await rpmShares(sql, name)).map((s) => s.used)).toEqual([2, 2]);
        return;
      }
      throw new Error(`the minute turned during each of ${RPM_KEYS.length} rounds`);
    } finally {
      await sql.close();
    }
  }, 60_000);

  test("usage and calls inspect agree on both instances", async () => {
    // Each instance flushes its usage buffer within a second: wait until both read all the rows.
    const counts = (rows: any[]) => Object.fromEntries(rows.map((r) => [r.group, r.requests]));
    await until(async () => {
      const [ua, ub] = await Promise.all([admin(a, "/usage?by=account"), admin(b, "/usage?by=account")]);
      const [ca, cb] = [counts(ua.body.rows ?? []), counts(ub.body.rows ?? [])];
      return [ca, cb].every((c) => c.one >= 6 && c["aff-1"] + c["aff-2"] >= 2 * conversations && (c["lim-1"] ?? 0) >= rpmServed); // the exact counts are checked below
    }, 15_000, "both instances to read every usage row");
    const [ua, ub] = await Promise.all([admin(a, "/usage?by=account"), admin(b, "/usage?by=account")]);
    expect(ua.status).toBe(200);
    expect(ub.body.rows).toEqual(ua.body.rows);
    const accounts = Object.fromEntries((ua.body.rows as any[]).map((r) => [r.group, r.requests]));
    expect(accounts.one).toBe(6);
    expect(accounts["aff-1"] + accounts["aff-2"]).toBe(2 * conversations);
    expect(accounts["lim-1"]).toBe(rpmServed);
    const [ca, cb] = await Promise.all([admin(a, "/calls?limit=200"), admin(b, "/calls?limit=200")]);
    expect(cb.body.calls).toEqual(ca.body.calls);
    const call = (ca.body.calls as any[]).find((c) => c.accountId === "one")!;
    const [ta, tb] = await Promise.all([admin(a, `/route-traces/${call.routeId}`), admin(b, `/route-traces/${call.routeId}`)]);
    expect(ta.status).toBe(200);
    expect(tb.body).toEqual(ta.body);
    expect(tb.body.requestId).toBe(call.requestId);
  }, 60_000);

  test("SIGKILL of A while B serves loses nothing that was written", async () => {
    upstream.reset();
    let limited: string | undefined;
    upstream.handle((r) => {
      if (!limited && r.path.startsWith("/aff")) {
        limited = who(r);
        return { status: 429, headers: { "retry-after": "300" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
      }
      return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
    });
    const before: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(a, msg("aff/claude-x", `before kill ${i}`));
      expect(res.status).toBe(200);
      before.push(res.headers.get("x-request-id")!);
    }
    // Written before the kill: the cooldown (through, announced: B holds it) and these calls (A's
    // usage flush, at most 1 s later: B reads them from the database).
    await until(() => cooling(b, limited!), ANNOUNCED_MS, `B to hold ${limited}'s cooldown written through A`);
    await until(async () => {
      const onB = await callIds(b);
      return before.every((id) => onB.has(id));
    }, ANNOUNCED_MS, "A's calls to reach the database");
    const fromA = (await admin(a, "/calls?limit=200")).body.calls as any[];
    a.kill("SIGKILL");
    await a.exited;
    upstream.reset();
    const served = await Promise.all(Array.from({ length: 4 }, (_, i) => post(b, msg("aff/claude-x", `after kill ${i}`))));
    expect(served.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(upstream.requests.map(who)).toEqual(Array(4).fill(limited === "aff-1" ? "aff-2" : "aff-1"));
    const ids = await callIds(b);
    expect(fromA.filter((c) => !ids.has(c.requestId))).toEqual([]);
    a = await start();
  }, 90_000);

  test("a stopped and restarted database is survived: serving goes on from memory, writes catch up", async () => {
    upstream.reset();
    await pg.stop();
    let limited: string | undefined;
    upstream.handle((r) => {
      if (!limited && r.path.startsWith("/dbo")) {
        limited = who(r);
        return { status: 429, headers: { "retry-after": "300" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
      }
      return simpleReply(r.format!, { text: `served by ${who(r)}`, model: r.model }, r.stream);
    });
    // B serves while the database is down: the 429 falls back to the other account, the cooldown is in memory.
    const during: string[] = [];
    for (const m of ["dbo/claude-x", "one/claude-x", "dbo/claude-x"]) {
      const res = await post(b, msg(m, "during the outage"));
      expect(res.status).toBe(200);
      during.push(res.headers.get("x-request-id")!);
    }
    const other = limited === "dbo-1" ? "dbo-2" : "dbo-1";
    expect(upstream.requests.map(who)).toEqual([limited!, other, "one", other]);
    // B noticed when its write of the cooldown failed (in the background): /health says so, still 200.
    await until(async () => ((await (await fetch(`${b.url}/health`)).json()) as any).db === "unreachable", 10_000, "B to notice the outage");
    const health = await fetch(`${b.url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: "ok", db: "unreachable" }]);
    expect([...b.stderr, ...b.stdout].some((l) => l.includes("database unreachable"))).toBe(true);
    await pg.start();
    await until(async () => ((await (await fetch(`${b.url}/health`)).json()) as any).db === "ok", 30_000, "B to reconnect");
    // The log line travels through B's stderr pipe, which may arrive after /health's answer.
    await until(() => [...b.stderr, ...b.stdout].some((l) => l.includes("database reachable again")), 5_000, "B to log that the database is back");
    // B's writes kept during the outage are replayed and announced (A also re-reads state every 2 s):
    // A holds the cooldown B wrote, and lists B's calls of the outage.
    await until(() => cooling(a, limited!), 30_000, `A to hold ${limited}'s cooldown written by B during the outage`);
    await until(async () => {
      const onA = await callIds(a, 500);
      return during.every((id) => onA.has(id));
    }, 30_000, "B's calls of the outage to reach A");
    // A honours the cooldown B wrote during the outage, and sees B's usage rows from it.
    upstream.reset();
    for (let i = 0; i < 4; i++) expect((await post(a, msg("dbo/claude-x", `after ${i}`))).status).toBe(200);
    expect(upstream.requests.map(who)).toEqual(Array(4).fill(other));
    const ids = new Set(((await admin(a, "/calls?limit=500")).body.calls as any[]).map((c) => c.requestId));
    expect(during.filter((id) => !ids.has(id))).toEqual([]);
  }, 120_000);
});
