/**
 * The config comparison's fingerprint of a config key's secret (a reviewer's read of newuser12a G24):
 * `instance_configs` published 12 hex digits of SHA-256(SHA-256(secret)), which anyone who can read the
 * database could test guesses of a short, human-chosen secret against at billions a second. Two real
 * instances on a real PostgreSQL with the same short secret for key `ci`: the row each publishes
 * holds a fingerprint that no fast hash of the secret matches (a reader's dictionary misses it) and
 * that costs a scrypt of 32 MiB per guess, salted with a random salt stored once in that database (not
 * with the key's name alone, the same in every deployment: review14 R8); both instances still agree on it (no difference), and after
 * B's file gives `ci` another secret, B's reload says the secret differs, never showing either.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { createHash, scryptSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { SECRET_FINGERPRINT_COST } from "../../src/shared-config.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until as pollUntil } from "../support/until.ts";

const SHORT = "hunter2";
const ENV = { UP_KEY: "sk-upstream-fingerprint", SWITCHYARD_SHARED_CONFIG_MS: "300" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let dbUrl: string;
let a: Instance;
let b: Instance;

const yamlOf = (secret: string) => `providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: ci, key: "${secret}", limits: { rpm: 60 } }
`;

/** Polls every 100 ms until `cond` holds; fails after `ms`. */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string) => pollUntil(cond, ms, what, 100);

/** What each instance published for `keys.ci.secret` (the JSON text's string), as a reader of the database sees it. */
async function published(): Promise<string[]> {
  const sql = new SQL(dbUrl);
  try {
    const rows = (await sql`SELECT parts FROM instance_configs ORDER BY label`) as Array<{ parts: string }>;
    return rows.map((r) => JSON.parse(JSON.parse(r.parts)["keys.ci.secret"]) as string);
  } finally {
    await sql.close();
  }
}

/** The salt stored once in this database (migration 17), as a reader of the database sees it. */
async function deploymentSalt(): Promise<string> {
  const sql = new SQL(dbUrl);
  try {
    const rows = (await sql`SELECT value FROM deployment_salts WHERE name = 'instance_configs'`) as Array<{ value: string }>;
    expect(rows).toHaveLength(1);
    return rows[0]!.value;
  } finally {
    await sql.close();
  }
}

beforeAll(async () => {
  pg = await startPostgres();
  dbUrl = await pg.createDatabase("fingerprint");
  upstream = await startFakeUpstream();
  a = await startInstance({ yaml: yamlOf(SHORT), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  b = await startInstance({ yaml: yamlOf(SHORT), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
}, 300_000);

afterAll(async () => {
  await Promise.all([a && stopInstance(a), b && stopInstance(b)]);
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

test("a short config key secret is published as a slow fingerprint a fast dictionary misses; instances with the same secret agree, another one differs", async () => {
  await until(async () => (await published()).length === 2, 15_000, "both instances' rows");
  const [fa, fb] = await published();
  expect(fa).toMatch(/^[0-9a-f]{12}$/);
  expect(fb).toBe(fa!); // the same secret on both: the same fingerprint, so no difference

  // a reader of the table testing guesses with fast hashes finds nothing
  const guesses = ["password", "123456", "letmein", "hunter1", SHORT, "hunter3"];
  const sha = (s: string) => createHash("sha256").update(s).digest("hex");
  for (const g of guesses) {
    expect(sha(sha(g)).slice(0, 12)).not.toBe(fa!);
    expect(sha(g).slice(0, 12)).not.toBe(fa!);
  }
  // it is scrypt at 32 MiB per guess (N = 2^15, r = 8), salted with this database's own random salt
  // and the key's name: a table of guesses computed once with a salt every deployment shares (the name
  // alone, as before review14 R8) misses it
  expect(SECRET_FINGERPRINT_COST.N * SECRET_FINGERPRINT_COST.r * 128).toBeGreaterThanOrEqual(32 * 1024 * 1024);
  const print = (salt: string) => scryptSync(SHORT, salt, 32, SECRET_FINGERPRINT_COST).toString("hex").slice(0, 12);
  expect(print("switchyard instance_configs ci")).not.toBe(fa!);
  const salt = await deploymentSalt();
  expect(salt).toMatch(/^[0-9a-f]{32}$/);
  expect(print(`switchyard instance_configs ${salt} ci`)).toBe(fa!);

  const warned = (inst: Instance) => inst.stdout.some((l) => l.includes("keys.ci.secret"));
  await Bun.sleep(1_000); // several checks of 300 ms
  expect(warned(a) || warned(b)).toBe(false);

  // B's file gives ci another secret: B's reload answer says it differs, showing neither secret
  writeFileSync(b.configPath, yamlOf("hunter3"));
  const r = await fetch(`${b.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${b.instance().adminToken}` } });
  expect(r.status).toBe(200);
  const warnings = ((await r.json()) as { warnings: Array<{ path: string; message: string }> }).warnings;
  expect(warnings.find((w) => w.path === "keys.ci.secret")?.message).toBe(`keys.ci.secret differs between here and ${a.url} (a different secret)`);
  for (const line of [...a.stdout, ...a.stderr, ...b.stdout, ...b.stderr, JSON.stringify(warnings)]) {
    expect(line).not.toContain(SHORT);
    expect(line).not.toContain("hunter3");
  }
}, 90_000);
