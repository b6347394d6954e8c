/**
 * A stored key that shares its name with a config key (the stored key was made before the file named
 * one like it) can be disabled, enabled and rotated (SPEC 2.3 keys): the stored key is the one acted on,
 * as `keys revoke NAME` revokes it, and the answer and the CLI say that the config file's key of that
 * name is not affected and is changed in the file. Before, disable, enable and rotate answered 409 "key
 * is declared in the config file: a key of the config file is turned off by removing it from the file",
 * which the operator could not act on: the stored key (whose secret was not in the file) stayed on.
 * A config key alone is still a 409. Disabling or revoking the stored key signs out the dashboards
 * signed in with it, not those signed in with the config key (review15 R11: sessions were ended by the
 * name, both keys' at once). On the embedded store and on PostgreSQL (each store's own code).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { keysRequiredConfig } from "../support/configs.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { cliOn } from "../support/source-cli.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const ADMIN = "sy-test-namesake-admin-000000001";
const CONFIG_PAIR = "sy-test-namesake-pair-0000000001";
const ENV = { UP_KEY: "sk-upstream-namesake-0001" };

const yamlOf = (providerUrl: string, withPair: boolean) => `${keysRequiredConfig(providerUrl, ADMIN)}${withPair ? `  - { name: pair, key: ${CONFIG_PAIR}, scopes: [admin] }\n` : ""}`;

const NOTE = (done: string) =>
  `${done} the stored key pair; the config file also declares a key named pair, which is not affected: a key of the config file is turned off, or given a new secret, in the file (and a reload).`;

let scratch: string;
let upstream: FakeUpstream;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "switchyard-namesake-"));
  upstream = await startFakeUpstream();
  upstream.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
});
afterAll(async () => {
  await upstream?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The CLI from source against the instance's data directory (its instance.json). */
function cli(inst: Instance, args: string[]) {
  const r = cliOn(inst.dataDir, args, { cwd: scratch, home: scratch, env: { SWITCHYARD_ADMIN_KEY: ADMIN } });
  return { code: r.code, out: r.stdout.trim().split("\n"), err: r.stderr.trim() };
}

async function scenario(inst: Instance): Promise<void> {
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${inst.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, json: (await r.json()) as any };
  };
  const chat = async (key: string) => {
    const r = await fetch(`${inst.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: "up/gpt-x", messages: [{ role: "user", content: "hi" }] }) });
    const json = (await r.json()) as any;
    return { status: r.status, code: json.error?.code };
  };

  /** Signs a dashboard in with `key` (as the sign-in page does): the session cookie. */
  const signIn = async (key: string) => {
    const r = await fetch(`${inst.url}/dashboard/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key }) });
    expect(r.status).toBe(200);
    return r.headers.get("set-cookie")!.split(";")[0]!;
  };
  /** What the admin API answers the dashboard session of this cookie (200 while it is valid, 401 once it ended). */
  const asSession = async (cookie: string) => (await fetch(`${inst.url}/admin/api/keys`, { headers: { cookie } })).status;

  // both keys of the name have the admin scope, so each can sign a dashboard in
  const made = await admin("POST", "/keys", { name: "pair", scopes: ["admin"] });
  expect(made.status).toBe(201);
  const stored: string = made.json.secret;
  // the config file then declares a key of the same name (another secret)
  writeFileSync(inst.configPath, yamlOf(upstream.url, true));
  expect((await admin("POST", "/config/reload")).status).toBe(200);
  expect(await chat(CONFIG_PAIR)).toEqual({ status: 200, code: undefined });
  const configSession = await signIn(CONFIG_PAIR);
  const storedSession = await signIn(stored);
  expect([await asSession(configSession), await asSession(storedSession)]).toEqual([200, 200]);

  const off = await admin("POST", "/keys/pair/disable");
  expect({ status: off.status, disabled: off.json.disabled, note: off.json.note }).toEqual({ status: 200, disabled: true, note: NOTE("disabled") });
  expect(await chat(stored)).toEqual({ status: 403, code: "key_disabled" });
  expect(await chat(CONFIG_PAIR)).toEqual({ status: 200, code: undefined });
  // the config key's dashboard stays signed in (it was signed out with the stored key: sessions were ended by name, R11)
  expect(await asSession(configSession)).toBe(200);

  const on = cli(inst, ["keys", "enable", "pair"]);
  expect({ code: on.code, out: on.out, err: on.err }).toEqual({ code: 0, out: ["enabled key pair: its requests are served again", `note: ${NOTE("enabled")}`], err: "" });
  expect(await chat(stored)).toEqual({ status: 200, code: undefined });
  // the stored key's session ended at `disable` and stays ended; the config key's is still valid
  expect([await asSession(configSession), await asSession(storedSession)]).toEqual([200, 401]);

  const rotated = cli(inst, ["keys", "rotate", "pair"]);
  expect(rotated.code).toBe(0);
  expect(rotated.out[0]).toBe(`note: ${NOTE("rotated")}`);
  const fresh = rotated.out[rotated.out.length - 1]!;
  expect(await chat(fresh)).toEqual({ status: 200, code: undefined });
  expect((await chat(stored)).status).toBe(401);
  expect(await chat(CONFIG_PAIR)).toEqual({ status: 200, code: undefined });

  // revoking the stored key ends its sessions only, too
  const freshSession = await signIn(fresh);
  // (the answer's note, which the CLI prints, as it does for the others: before, revoke said nothing of the config key)
  const revoked = cli(inst, ["keys", "revoke", "pair"]);
  expect({ code: revoked.code, out: revoked.out, err: revoked.err }).toEqual({ code: 0, out: ["revoked key pair", `note: ${NOTE("revoked")}`], err: "" });
  expect([await asSession(configSession), await asSession(freshSession)]).toEqual([200, 401]);

  // a config key alone is still changed in the file only
  const cfg = await admin("POST", "/keys/admin/disable");
  expect({ status: cfg.status, message: cfg.json.error?.message }).toEqual({
    status: 409,
    message: 'key "admin" is declared in the config file: a key of the config file is turned off by removing it from the file (and a reload)',
  });
}

describe("a stored key that shares its name with a config key can be disabled, enabled and rotated", () => {
  test("on the embedded store", async () => {
    const inst = await startInstance({ yaml: yamlOf(upstream.url, false), env: ENV });
    try {
      await scenario(inst);
    } finally {
      await stopInstance(inst);
      rmSync(inst.dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  describe("on PostgreSQL", () => {
    let pg: TestPostgres;
    beforeAll(async () => {
      pg = await startPostgres();
    }, 120_000);
    afterAll(async () => {
      await pg?.destroy();
    }, 30_000);

    test("the same", async () => {
      const inst = await startInstance({ yaml: yamlOf(upstream.url, false), env: ENV, args: ["--database", await pg.createDatabase("namesake")], timeoutMs: 90_000 });
      try {
        await scenario(inst);
      } finally {
        await stopInstance(inst);
      }
    }, 150_000);
  });
});
