/**
 * Dashboard access (SPEC 9.4, 2.6) over plain HTTP: who gets the app and who gets the login page, the
 * session cookie's attributes, the CSRF rule on the admin API, and the security headers. The browser
 * tests (dashboard.browser.test.ts) check the same rules as a user sees them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { CSP } from "../../src/dashboard/routes.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const ADMIN = "sy-test-admin-key-0123456789abcdef";
const PLAIN = "sy-test-plain-key-0123456789abcdef";
const REMOTE = { "x-forwarded-for": "203.0.113.9" };

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway(
    `
${providersAtFake(["anth", "anthropic"])}
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
keys:
  - { name: boss, key: "${ADMIN}", scopes: [admin] }
  - { name: dev, key: "${PLAIN}" }
`,
  );
});
afterAll(() => gw?.stop());

const meta = (html: string, name: string) => new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(html)?.[1];
const view = (html: string) => /<body data-view="(\w+)">/.exec(html)?.[1];
const cookieOf = (res: Response) => res.headers.get("set-cookie")?.split(";")[0];

async function login(key: string, headers: Record<string, string> = REMOTE): Promise<Response> {
  return fetch(`${gw.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ key }) });
}

describe("who sees what", () => {
  test("a local browser gets the app, a session cookie (HttpOnly, SameSite=Strict) and a CSRF token", async () => {
    const res = await fetch(`${gw.url}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(view(html)).toBe("app");
    expect(meta(html, "csrf-token")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(meta(html, "access-mode")).toBe("loopback");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^sy_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  });

  test("a remote browser without a session gets the login page: no CSRF token, no data, and the admin API refuses it", async () => {
    const res = await fetch(`${gw.url}/dashboard/accounts`, { headers: REMOTE });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(view(html)).toBe("login");
    expect(meta(html, "csrf-token")).toBe("");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(html).not.toContain("anth-1");
    const api = await fetch(`${gw.url}/admin/api/accounts`, { headers: REMOTE });
    expect(api.status).toBe(401);
  });

  test("every dashboard response carries the strict CSP and no inline script or style", async () => {
    const res = await fetch(`${gw.url}/dashboard/keys`);
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    expect(CSP).toContain("script-src 'self'");
    expect(CSP).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style="/);
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const a of assets) {
      const r = await fetch(`${gw.url}${a}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-security-policy")).toBe(CSP);
      expect(r.headers.get("content-type")).toMatch(a.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
    }
  });

  test("the admin API's answers, data and errors alike, are never cached (Cache-Control: no-store) nor sniffed", async () => {
    for (const path of ["/admin/api/keys", "/admin/api/calls", "/admin/api/accounts", "/admin/api/calls/sy_nope/recording", "/admin/api/usage?by=nope"]) {
      const r = await fetch(`${gw.url}${path}`);
      expect({ path, cache: r.headers.get("cache-control"), sniff: r.headers.get("x-content-type-options") }).toEqual({ path, cache: "no-store", sniff: "nosniff" });
      await r.text();
    }
    const refused = await fetch(`${gw.url}/admin/api/keys`, { headers: REMOTE });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  test("the browser guard (SPEC 2.6) covers the dashboard: a rebound host name and a foreign page's sign-in are refused", async () => {
    const rebound = await fetch(`${gw.url}/dashboard/accounts`, { headers: { host: "evil.example" } });
    expect(rebound.status).toBe(421);
    expect(rebound.headers.get("content-type")).toContain("application/json");
    const foreign = await fetch(`${gw.url}/dashboard/login`, { method: "POST", headers: { origin: "https://evil.example", "content-type": "application/json" }, body: JSON.stringify({ key: ADMIN }) });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("set-cookie")).toBeNull();
  });

  test("a mistyped dashboard page is the dashboard's own 404 page (HTML, same headers, a link back); assets, the admin API and /v1 keep JSON 404s", async () => {
    for (const [path, shown] of [
      ["/dashboard/nope", "/dashboard/nope"],
      ["/dashboard/calls/extra", "/dashboard/calls/extra"],
      ["/dashboard/%3Cimg%20src=x%20onerror=alert(1)%3E", "/dashboard/&lt;img src=x onerror=alert(1)&gt;"],
    ]) {
      for (const headers of [{}, REMOTE]) {
        const r = await fetch(`${gw.url}${path}`, { headers });
        expect({ path, status: r.status, type: r.headers.get("content-type") }).toEqual({ path, status: 404, type: "text/html; charset=utf-8" });
        expect(r.headers.get("content-security-policy")).toBe(CSP);
        expect(r.headers.get("x-frame-options")).toBe("DENY");
        expect(r.headers.get("x-content-type-options")).toBe("nosniff");
        expect(r.headers.get("cache-control")).toBe("no-store");
        expect(r.headers.get("set-cookie")).toBeNull();
        const html = await r.text();
        expect(html).toContain(`<code>${shown}</code>`);
        expect(html).toContain('<a class="btn btn-primary" href="/dashboard">Back to the dashboard</a>');
        expect(html).not.toMatch(/<script|<style|style="|<img|csrf-token|anth-1/);
        expect(html).toMatch(/<link rel="stylesheet" href="\/dashboard\/assets\/[^"]+\.css">/);
      }
    }
    for (const path of ["/dashboard/assets/nope.js", "/admin/api/nope", "/v1/nope"]) {
      const r = await fetch(`${gw.url}${path}`);
      expect({ path, status: r.status, type: r.headers.get("content-type") }).toEqual({ path, status: 404, type: "application/json" });
      expect(((await r.json()) as { error: { type: string } }).error.type).toMatch(/^(not_found_error|invalid_request_error)$/);
    }
  });
});

describe("sign-in and CSRF", () => {
  test("a wrong key is refused, a key without the admin scope is refused by name", async () => {
    const bad = await login("sy-nope");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("set-cookie")).toBeNull();
    const plain = await login(PLAIN);
    expect(plain.status).toBe(403);
    expect(((await plain.json()) as { error: { message: string } }).error.message).toContain("dev has no admin scope");
    const foreign = await login(ADMIN, { ...REMOTE, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
  });

  test("an admin key signs in; the cookie then reads data, and changes state only with the CSRF token", async () => {
    const res = await login(ADMIN);
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Strict;/);
    const cookie = cookieOf(res)!;
    const page = await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } });
    const html = await page.text();
    expect(view(html)).toBe("app");
    expect(meta(html, "access-mode")).toBe("session");
    const csrf = meta(html, "csrf-token")!;
    expect(csrf.length).toBe(43);
    expect(html).not.toContain(ADMIN);

    const read = await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } });
    expect(read.status).toBe(200);

    const body = JSON.stringify({ name: "from-cookie" });
    const noToken = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...REMOTE, cookie, "content-type": "application/json" }, body });
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: { message: string } }).error.message).toContain("CSRF");
    const wrongToken = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": "x".repeat(43), "content-type": "application/json" }, body });
    expect(wrongToken.status).toBe(403);
    const listed = (await (await fetch(`${gw.url}/admin/api/keys`, { headers: { ...REMOTE, cookie } })).json()) as { keys: Array<{ name: string }> };
    expect(listed.keys.map((k) => k.name)).not.toContain("from-cookie");

    const ok = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": csrf, "content-type": "application/json" }, body });
    expect(ok.status).toBe(201);
  });

  test("the CSRF token cannot be computed from the cookie (another service on the host name receives the cookie)", async () => {
    const cookie = cookieOf(await login(ADMIN))!;
    const token = cookie.slice(cookie.indexOf("=") + 1);
    const csrf = meta(await (await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } })).text(), "csrf-token")!;
    // What the token was until 2026-12-06: SHA-256 of a fixed label and the cookie's value.
    const derived = createHash("sha256").update("switchyard dashboard csrf\0", "utf8").update(token, "utf8").digest("base64url");
    expect(csrf).not.toBe(derived);
    const body = JSON.stringify({ name: "from-cookie-holder" });
    const forged = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": derived, "content-type": "application/json" }, body });
    expect(forged.status).toBe(403);
    const out = await fetch(`${gw.url}/dashboard/logout`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": derived } });
    expect(out.status).toBe(403);
    const listed = (await (await fetch(`${gw.url}/admin/api/keys`, { headers: { ...REMOTE, cookie } })).json()) as { keys: Array<{ name: string }> };
    expect(listed.keys.map((k) => k.name)).not.toContain("from-cookie-holder");
  });

  test("behind an HTTPS proxy the cookie is __Host-sy_session (Secure), and it signs in and out", async () => {
    const https = { ...REMOTE, "x-forwarded-proto": "https" };
    const res = await login(ADMIN, https);
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/^__Host-sy_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    const cookie = cookieOf(res)!;
    const page = await fetch(`${gw.url}/dashboard`, { headers: { ...https, cookie } });
    const csrf = meta(await page.text(), "csrf-token")!;
    expect(csrf.length).toBe(43);
    const ok = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...https, cookie, "x-csrf-token": csrf, "content-type": "application/json" }, body: JSON.stringify({ name: "over-https" }) });
    expect(ok.status).toBe(201);
    const out = await fetch(`${gw.url}/dashboard/logout`, { method: "POST", headers: { ...https, cookie, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()).toEqual(["__Host-sy_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure", "sy_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"]);
    expect((await fetch(`${gw.url}/admin/api/keys`, { headers: { ...https, cookie } })).status).toBe(401);
  });

  test("a local browser's cookie needs the CSRF token too; header-key callers need none", async () => {
    const page = await fetch(`${gw.url}/dashboard`);
    const cookie = cookieOf(page)!;
    const csrf = meta(await page.text(), "csrf-token")!;
    const body = JSON.stringify({ name: "local-cookie" });
    const refused = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body });
    expect(refused.status).toBe(403);
    const ok = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" }, body });
    expect(ok.status).toBe(201);
    const header = await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { ...REMOTE, authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "by-header" }) });
    expect(header.status).toBe(201);
  });

  test("signing out needs the CSRF token and ends the session; revoking a key ends its sessions", async () => {
    const cookie = cookieOf(await login(ADMIN))!;
    const csrf = meta(await (await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } })).text(), "csrf-token")!;
    expect((await fetch(`${gw.url}/dashboard/logout`, { method: "POST", headers: { ...REMOTE, cookie } })).status).toBe(403);
    const out = await fetch(`${gw.url}/dashboard/logout`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": csrf } });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } })).status).toBe(401);

    // A stored admin key, signed in, then revoked.
    const created = (await (await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "temp-admin", scopes: ["admin"] }) })).json()) as { secret?: string; key?: string };
    const secret = created.secret ?? created.key!;
    const c2 = cookieOf(await login(secret))!;
    expect((await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie: c2 } })).status).toBe(200);
    expect((await fetch(`${gw.url}/admin/api/keys/temp-admin`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    expect((await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie: c2 } })).status).toBe(401);
  });
});

describe("the dry run as a disabled key (review13 R4)", () => {
  test("answers what the endpoint would: 403 key_disabled naming the key, by name or by its secret in the headers; enabled, it routes again", async () => {
    const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const made = (await (await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "paused" }) })).json()) as { secret?: string; key?: string };
    const secret = made.secret ?? made.key!;
    const request = { model: "anth/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
    const dry = (extra: Record<string, unknown>) => fetch(`${gw.url}/admin/api/dry-run`, { method: "POST", headers: admin, body: JSON.stringify({ request, format: "anthropic-messages", ...extra }) });
    expect((await fetch(`${gw.url}/admin/api/keys/paused/disable`, { method: "POST", headers: admin })).status).toBe(200);
    for (const extra of [{ key: "paused" }, { headers: { authorization: `Bearer ${secret}` } }]) {
      const r = await dry(extra);
      expect(r.status).toBe(403);
      const e = ((await r.json()) as { error: { code: string; message: string; refused_status?: number } }).error;
      expect({ code: e.code, refused: e.refused_status }).toEqual({ code: "key_disabled", refused: 403 });
      expect(e.message).toBe('The endpoint would refuse this request (403): Client key "paused" is disabled on this gateway for now: its requests are refused until an operator enables it again (switchyard keys enable paused).');
    }
    expect((await fetch(`${gw.url}/admin/api/keys/paused/enable`, { method: "POST", headers: admin })).status).toBe(200);
    expect((await dry({ key: "paused" })).status).toBe(200);
  });
});

describe("a session lasts as long as its key", () => {
  test("disabling a key signs its dashboards out for good: enabling it again does not bring an old cookie back, whether or not the browser called meanwhile (review13 R3)", async () => {
    const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
    const made = (await (await fetch(`${gw.url}/admin/api/keys`, { method: "POST", headers: admin, body: JSON.stringify({ name: "ops-laptop", scopes: ["admin"] }) })).json()) as { secret?: string; key?: string };
    const secret = made.secret ?? made.key!;
    const quiet = cookieOf(await login(secret))!; // its tab closed while the key is off
    const calling = cookieOf(await login(secret))!; // its page calls while the key is off
    const asBrowser = (cookie: string) => fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } });
    expect([(await asBrowser(quiet)).status, (await asBrowser(calling)).status]).toEqual([200, 200]);
    expect((await fetch(`${gw.url}/admin/api/keys/ops-laptop/disable`, { method: "POST", headers: admin })).status).toBe(200);
    expect((await asBrowser(calling)).status).toBe(401);
    expect((await fetch(`${gw.url}/admin/api/keys/ops-laptop/enable`, { method: "POST", headers: admin })).status).toBe(200);
    await Bun.sleep(1_500); // past the sessions' re-read from the store
    expect([(await asBrowser(quiet)).status, (await asBrowser(calling)).status]).toEqual([401, 401]);
    // while disabled, signing in with it says so (it read "That key is not valid.")
    expect((await fetch(`${gw.url}/admin/api/keys/ops-laptop/disable`, { method: "POST", headers: admin })).status).toBe(200);
    const refused = await login(secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe("Key ops-laptop is disabled for now; it signs in again once it is enabled (switchyard keys enable ops-laptop).");
    expect((await fetch(`${gw.url}/admin/api/keys/ops-laptop/enable`, { method: "POST", headers: admin })).status).toBe(200);
    // signing in again with the key works
    expect((await asBrowser(cookieOf(await login(secret))!)).status).toBe(200);
  });

  test("a config reload that drops the key signs its browser out", async () => {
    const cookie = cookieOf(await login(ADMIN))!;
    expect((await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } })).status).toBe(200);
    const { readFileSync, writeFileSync } = await import("node:fs");
    const before = readFileSync(gw.configPath, "utf8");
    try {
      writeFileSync(gw.configPath, before.replace(`  - { name: boss, key: "${ADMIN}", scopes: [admin] }\n`, ""));
      const reload = await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${gw.app.adminToken}` } });
      expect(reload.status).toBe(200);
      expect((await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } })).status).toBe(401);
      const page = await (await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } })).text();
      expect(view(page)).toBe("login");
    } finally {
      writeFileSync(gw.configPath, before);
      await fetch(`${gw.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${gw.app.adminToken}` } });
    }
  });
});

describe("a session signed in with the instance's admin token (newuser14 K11)", () => {
  test("ends when the instance restarts, and the admin API's 401 says why; a session of an admin-scope key outlives the restart", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { ADMIN_TOKEN_CHANGED } = await import("../../src/admin/access.ts");
    const dataDir = mkdtempSync(join(tmpdir(), "switchyard-restart-"));
    const yaml = `
${providersAtFake(["anth", "anthropic"])}
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
keys:
  - { name: boss, key: "${ADMIN}", scopes: [admin] }
`;
    const signIn = async (url: string, key: string) => {
      const res = await fetch(`${url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json", ...REMOTE }, body: JSON.stringify({ key }) });
      expect(res.status).toBe(200);
      return cookieOf(res)!;
    };
    const first = await startGateway(yaml, { dataDir });
    let second: typeof first | undefined;
    try {
      const byToken = await signIn(first.url, first.app.adminToken);
      const byKey = await signIn(first.url, ADMIN);
      for (const cookie of [byToken, byKey]) expect((await fetch(`${first.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } })).status).toBe(200);
      await first.stopGatewayOnly();
      second = await startGateway(yaml, { dataDir, fake: first.fake });
      expect(second.app.adminToken).not.toBe(first.app.adminToken);
      const lapsed = await fetch(`${second.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie: byToken } });
      expect({ status: lapsed.status, message: ((await lapsed.json()) as { error: { message: string } }).error.message }).toEqual({ status: 401, message: ADMIN_TOKEN_CHANGED });
      expect((await fetch(`${second.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie: byKey } })).status).toBe(200);
    } finally {
      await second?.stopGatewayOnly();
      await first.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a cookie that names no live session (the upgrade tryout of 2026-12-07)", () => {
  test("the admin API's 401 says that the dashboard session is no longer valid and to sign in again, and the page is the sign-in view", async () => {
    const { SESSION_NOT_VALID } = await import("../../src/admin/access.ts");
    const refusal = async (cookie: string) => {
      const res = await fetch(`${gw.url}/admin/api/accounts`, { headers: { ...REMOTE, cookie } });
      return { status: res.status, error: ((await res.json()) as { error: unknown }).error };
    };
    const said = { status: 401, error: { type: "authentication_error", message: SESSION_NOT_VALID } };
    // a session an earlier version kept in its memory only: unknown to the store
    expect(await refusal("sy_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).toMatchObject(said);
    // one signed out
    const cookie = cookieOf(await login(ADMIN))!;
    const csrf = meta(await (await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } })).text(), "csrf-token")!;
    expect((await fetch(`${gw.url}/dashboard/logout`, { method: "POST", headers: { ...REMOTE, cookie, "x-csrf-token": csrf } })).status).toBe(200);
    expect(await refusal(cookie)).toMatchObject(said);
    expect(view(await (await fetch(`${gw.url}/dashboard`, { headers: { ...REMOTE, cookie } })).text())).toBe("login");
    // no cookie at all: the admin API's own 401, as before
    const bare = await fetch(`${gw.url}/admin/api/accounts`, { headers: REMOTE });
    expect(((await bare.json()) as { error: { message: string } }).error.message).toBe("This admin API needs a key with the admin scope.");
  });
});

describe("the sign-in's body: JSON, or text/plain that is JSON, as the admin API reads it (src/admin/replies.ts readJson)", () => {
  /** POST /dashboard/login from another machine with `body` as it is and this Content-Type. */
  const signIn = (body: string, contentType: string) => fetch(`${gw.url}/dashboard/login`, { method: "POST", headers: { "content-type": contentType, ...REMOTE }, body });

  test("{\"key\": …} as text/plain;charset=UTF-8 (what a browser's and Node's fetch send for a string body): signed in, a session cookie", async () => {
    const res = await signIn(JSON.stringify({ key: ADMIN }), "text/plain;charset=UTF-8");
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { ok: true, subject: "boss" } });
    expect(cookieOf(res)).toMatch(/^sy_session=[A-Za-z0-9_-]{43}$/);
  });

  test("a non-JSON type (a form, text/plain that is not JSON): the admin API's 415, with the dashboard's security headers and no cookie", async () => {
    for (const [body, type, message] of [
      [`key=${ADMIN}`, "application/x-www-form-urlencoded", "The body must be JSON; its Content-Type is \"application/x-www-form-urlencoded\" (what curl -d sends when no type is given): add -H 'content-type: application/json'."],
      [ADMIN, "text/plain", 'The body must be JSON; its Content-Type is "text/plain" and it is not valid JSON (a text/plain body is read when it is JSON): send JSON, as application/json.'],
      [JSON.stringify({ key: ADMIN }), "application/xml", 'The body must be JSON; its Content-Type is "application/xml": send it as application/json.'],
    ]) {
      const res = await signIn(body!, type!);
      expect({ type, status: res.status, body: await res.json() }).toEqual({ type, status: 415, body: { error: { message, type: "invalid_request_error", param: null, code: "unsupported_media_type" } } });
      expect(res.headers.get("content-security-policy")).toBe(CSP);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
  });

  test("JSON that is not {\"key\": …}, or not JSON, as application/json: 400 as before", async () => {
    for (const body of ["{", '"just a string"']) {
      const res = await signIn(body, "application/json");
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^(Send \{"key": "…"\} as JSON\.|key: enter an admin-scope key\.)$/);
    }
  });
});
