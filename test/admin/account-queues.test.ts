/**
 * The admin API's queues of configuration changes (src/admin/config-writer.ts), as an operator sees them:
 *
 * - An account's disable is answered at once while a login or import of another account is still under
 *   way (its store write held open here, as a PostgreSQL store waiting on a lock holds it). Before the
 *   fix (session 45's "Not done yet"): disable and enable queued in the `accounts` queue behind every
 *   login and import, and the disable below was not answered until the login was released.
 * - A disable of the account a login is writing waits for that login and then applies (the login would
 *   otherwise enable it again).
 * - `POST /config/reload` sent while a combo create is between its check and its write runs after the
 *   create. Before the fix it went through no queue and was answered while the create was held (the
 *   create's check had read the old file).
 * - So do the config file watcher's re-read after an edit and SIGHUP's (src/follow-config-file.ts, in
 *   the same queues). Before the fix (session 46) both re-read and applied the file while the create
 *   was held: the edit's alias was in force and its "config reloaded" line written within the 200 ms
 *   debounce, and SIGHUP's line at once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const json = { "content-type": "application/json" };
const post = (path: string, body?: unknown) => fetch(`${gw.url}/admin/api${path}`, { method: "POST", headers: json, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

/**
 * Replaces the store's method `name` with one that tells `entered` and then waits for `release()`
 * before doing the real write; `restore()` puts the method back.
 */
function hold(name: "upsertAccount" | "createCombo") {
  const store = gw.app.store as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const original = store[name]!;
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const enteredP = new Promise<void>((r) => (entered = r));
  store[name] = async (...a: unknown[]) => {
    entered();
    await gate;
    return original.apply(store, a);
  };
  return { entered: enteredP, release, restore: () => (store[name] = original) };
}

/** What `p` resolves to if it settles within `ms`, else "pending". */
const within = <T>(p: Promise<T>, ms: number): Promise<T | "pending"> => Promise.race([p, Bun.sleep(ms).then(() => "pending" as const)]);

const login = (id: string) =>
  post("/accounts", { provider: "claude-code", id, origin: "login", credential: { type: "oauth", access_token: `tok-access-${id}`, refresh_token: `tok-refresh-${id}`, expires_at: Date.now() + 3_600_000 } });

test("an account's disable is answered while a login of another account is under way; a disable of the account being logged in waits for it", async () => {
  const held = hold("upsertAccount");
  try {
    const slowLogin = login("cc-slow");
    await held.entered; // the login checked and is writing
    const t0 = performance.now();
    const other = await within(post("/accounts/oai-1/disable"), 3_000);
    const otherMs = Math.round(performance.now() - t0);
    expect(other).not.toBe("pending");
    expect({ status: (other as Response).status, body: await (other as Response).json() }).toEqual({ status: 200, body: { id: "oai-1", disabled: true } });
    expect(otherMs).toBeLessThan(2_000);
    expect(gw.app.registry.find("oai-1")?.account.disabled).toBe(true);

    // The same account's disable waits for its login (which stores it enabled), then applies.
    const same = post("/accounts/cc-slow/disable");
    expect(await within(same, 300)).toBe("pending");
    expect(await within(slowLogin, 50)).toBe("pending");
    held.release();
    const loggedIn = await slowLogin;
    expect(loggedIn.status).toBe(201);
    const sameReply = await same;
    expect({ status: sameReply.status, body: await sameReply.json() }).toEqual({ status: 200, body: { id: "cc-slow", disabled: true } });
    expect(gw.app.registry.find("cc-slow")?.account.disabled).toBe(true);
  } finally {
    held.release();
    held.restore();
    await post("/accounts/oai-1/enable");
  }
}, 30_000);

test("POST /config/reload sent while a combo create is writing runs after the create", async () => {
  const held = hold("createCombo");
  const order: string[] = [];
  try {
    const create = post("/combos", { name: "queued-combo", targets: [{ model: "oai/gpt-x" }] }).then((r) => (order.push("create"), r));
    await held.entered; // checked against the file as read now, not written yet
    const reload = post("/config/reload").then((r) => (order.push("reload"), r));
    expect(await within(reload, 300)).toBe("pending");
    held.release();
    const [c, r] = await Promise.all([create, reload]);
    expect({ create: c.status, reload: r.status, order }).toEqual({ create: 201, reload: 200, order: ["create", "reload"] });
    expect(((await r.json()) as { reloaded: boolean }).reloaded).toBe(true);
  } finally {
    held.release();
    held.restore();
  }
}, 30_000);

/** The gateway's "config reloaded" log lines so far (a re-read of the file after an edit, SIGHUP or POST /config/reload). */
const reloadedLines = () => gw.logs.filter((l) => l.includes('"msg":"config reloaded"')).length;

/** Polls `ok` every 20 ms for up to 5 s; whether it came true. */
async function eventually(ok: () => boolean): Promise<boolean> {
  for (const end = Date.now() + 5_000; Date.now() < end; await Bun.sleep(20)) if (ok()) return true;
  return ok();
}

test("the file watcher's re-read after an edit made while a combo create is writing runs after the create", async () => {
  const held = hold("createCombo");
  const file = readFileSync(gw.configPath, "utf8");
  try {
    const create = post("/combos", { name: "watched-combo", targets: [{ model: "oai/gpt-x" }] });
    await held.entered;
    const before = reloadedLines();
    writeFileSync(gw.configPath, `${file}\naliases:\n  watched-alias: oai/gpt-x\n`);
    await Bun.sleep(900); // the watcher's 200 ms quiet period, well past
    expect({ alias: gw.app.config().aliases.get("watched-alias") ?? null, reloaded: reloadedLines() - before }).toEqual({ alias: null, reloaded: 0 });
    held.release();
    expect((await create).status).toBe(201);
    expect(await eventually(() => gw.app.config().aliases.get("watched-alias") === "oai/gpt-x")).toBe(true);
    expect(reloadedLines() - before).toBe(1);
    expect(gw.app.config().combos.has("watched-combo")).toBe(true);
  } finally {
    held.release();
    held.restore();
    writeFileSync(gw.configPath, file);
    await Bun.sleep(400);
  }
}, 30_000);

test("SIGHUP sent while a combo create is writing re-reads the file after the create", async () => {
  await eventually(() => gw.app.config().aliases.get("watched-alias") === undefined); // the file put back above
  const held = hold("createCombo");
  try {
    const create = post("/combos", { name: "hup-combo", targets: [{ model: "oai/gpt-x" }] });
    await held.entered;
    const before = reloadedLines();
    process.kill(process.pid, "SIGHUP"); // the same file: SIGHUP re-reads it anyway, and says "config reloaded"
    await Bun.sleep(500);
    expect(reloadedLines() - before).toBe(0);
    held.release();
    expect((await create).status).toBe(201);
    expect(await eventually(() => reloadedLines() - before === 1)).toBe(true);
  } finally {
    held.release();
    held.restore();
  }
}, 30_000);
