/**
 * Dashboard sessions with two instances on one PostgreSQL (SPEC 9.4 with D-2; newuser12a G17): two real
 * `switchyard start --database postgres://…` processes (A and B, client keys required) behind what a
 * non-sticky load balancer does: a browser's calls land on either.
 * - A browser signed in on A uses B's admin API with the same cookie and CSRF token (B answered 401:
 *   sessions lived in the issuing process's memory, so every other call behind a load balancer failed).
 * - Signing in on B (which replaces the browser's one `sy_session` cookie, cookies ignore ports) gives a
 *   session A accepts too: the two dashboards no longer sign each other out.
 * - Signing out on B ends the session on A too; the CSRF token is still required on B.
 * - The shared table holds no session token, CSRF token or key: only hashes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const ENV = { BOSS: "sy-dashboard-admin-key-00000000001" };

let pg: TestPostgres;
let sql: SQL;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  pg = await startPostgres();
  const dbUrl = await pg.createDatabase("sessions");
  sql = new SQL(dbUrl, { max: 1 });
  const yaml = `server:
  require_api_key: true
keys:
  - { name: boss, key: env:BOSS, scopes: [admin] }
`;
  const start = () => startInstance({ yaml, env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  [a, b] = await Promise.all([start(), start()]);
}, 180_000);

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await sql?.close();
  await pg?.destroy();
}, 60_000);

/** Signs in on `inst` with the admin key; the session cookie (`sy_session=…`). */
async function signIn(inst: Instance): Promise<string> {
  const res = await fetch(`${inst.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: ENV.BOSS }) });
  expect(res.status).toBe(200);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  expect(cookie).toMatch(/^sy_session=.+/);
  return cookie;
}

/** The CSRF token the dashboard page served by `inst` to this cookie carries. */
async function csrfOf(inst: Instance, cookie: string): Promise<string> {
  const html = await (await fetch(`${inst.url}/dashboard`, { headers: { cookie } })).text();
  const m = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
  expect(m?.[1]).toBeTruthy();
  return m![1]!;
}

const keysList = (inst: Instance, cookie: string) => fetch(`${inst.url}/admin/api/keys`, { headers: { cookie } });
const createKey = (inst: Instance, cookie: string, name: string, csrf?: string) =>
  fetch(`${inst.url}/admin/api/keys`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie, ...(csrf ? { "x-csrf-token": csrf } : {}) },
    body: JSON.stringify({ name }),
  });

describe("dashboard sessions across two instances on one PostgreSQL (SPEC 9.4, D-2)", () => {
  test("signed in on A, the admin API on B takes the cookie and CSRF token; signing in on B does not sign A out; signing out on B ends it on A", async () => {
    const cookieA = await signIn(a);
    const csrf = await csrfOf(a, cookieA);
    // What a non-sticky load balancer does: the next calls land on B.
    expect((await keysList(b, cookieA)).status).toBe(200);
    expect(await csrfOf(b, cookieA)).toBe(csrf);
    expect((await createKey(b, cookieA, "made-via-b")).status).toBe(403); // no CSRF token: refused
    expect((await createKey(b, cookieA, "made-via-b", csrf)).status).toBe(201);
    expect((await keysList(a, cookieA)).status).toBe(200);

    // Two dashboards in one browser: signing in on B replaces the one cookie; A accepts the new one.
    const cookieB = await signIn(b);
    expect((await keysList(a, cookieB)).status).toBe(200);
    expect((await keysList(a, cookieA)).status).toBe(200);

    // The store keeps hashes only.
    const rows = await sql`SELECT * FROM dashboard_sessions`;
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const dump = JSON.stringify(rows);
    for (const secret of [cookieA.split("=")[1]!, cookieB.split("=")[1]!, csrf, ENV.BOSS]) expect(dump).not.toContain(secret);

    // Sign-out on B (it needs the CSRF token there too), then A refuses the cookie.
    expect((await fetch(`${b.url}/dashboard/logout`, { method: "POST", headers: { cookie: cookieA } })).status).toBe(403);
    const out = await fetch(`${b.url}/dashboard/logout`, { method: "POST", headers: { cookie: cookieA, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    const refused = await keysList(a, cookieA);
    expect(refused.status).toBe(401);
    expect((await keysList(b, cookieA)).status).toBe(401);
    // The other session is untouched.
    expect((await keysList(a, cookieB)).status).toBe(200);
  }, 60_000);
});
