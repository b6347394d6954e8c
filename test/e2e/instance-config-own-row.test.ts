/**
 * An instance killed without a clean stop left its `instance_configs` row (its values of the shared
 * config) for up to 90 s; restarted at once on the same data directory with a changed file, it read
 * that row as another running instance's and warned that "instances sharing this database enforce
 * different config for the shared pool", naming its own previous URL. It now recognises its own
 * previous row (the same host and data directory) and replaces it: no warning, one row. A real
 * instance on a real PostgreSQL, killed with SIGKILL and started again with `ci` at another rpm; then a
 * second instance on another data directory with the first file: that one is still told apart.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { writeFileSync } from "node:fs";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

const ENV = { UP_KEY: "sk-upstream-own-row", KEY_CI: "sy-ci-client-key-own-row-000001", SWITCHYARD_SHARED_CONFIG_MS: "300" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let dbUrl: string;
const started: Instance[] = [];

const yamlOf = (rpm: number) => `providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: ci, key: env:KEY_CI, limits: { rpm: ${rpm} } }
`;

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** The labels (URLs) of the rows in instance_configs. */
async function rows(): Promise<string[]> {
  const sql = new SQL(dbUrl);
  try {
    return ((await sql`SELECT label FROM instance_configs ORDER BY label`) as Array<{ label: string }>).map((r) => r.label);
  } finally {
    await sql.close();
  }
}

const start = async (yaml: string, dataDir?: string) => {
  const inst = await startInstance({ yaml, env: ENV, args: ["--database", dbUrl], timeoutMs: 30_000, ...(dataDir ? { dataDir } : {}) });
  started.push(inst);
  return inst;
};
/** The messages of the instance's "enforce different config" warnings. */
const warnings = (inst: Instance) => inst.stdout.filter((l) => l.includes("enforce different config")).map((l) => (JSON.parse(l) as { msg: string }).msg);

beforeAll(async () => {
  pg = await startPostgres();
  dbUrl = await pg.createDatabase("own_row");
  upstream = await startFakeUpstream();
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((i) => stopInstance(i)));
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

test("an instance killed and started again on its data directory with a changed file does not take its own old row for another instance", async () => {
  const first = await start(yamlOf(60));
  await until(async () => (await rows()).length === 1, 15_000, "the first row");
  first.kill("SIGKILL");
  await first.exited;
  expect(await rows()).toEqual([first.url]); // left behind

  writeFileSync(first.configPath, yamlOf(10));
  const again = await start(yamlOf(10), first.dataDir);
  await until(async () => (await rows()).includes(again.url), 15_000, "the restarted instance's row");
  await Bun.sleep(1_500); // several checks of 300 ms
  expect(warnings(again)).toEqual([]);
  expect(await rows()).toEqual([again.url]);

  // another data directory is another instance: its different file is reported
  const other = await start(yamlOf(60));
  await until(() => warnings(other).length > 0, 15_000, "the other instance's warning");
  expect(warnings(other)[0]).toContain(`keys.ci.limits is {"rpm":60} here and {"rpm":10} on ${again.url}`);
  sameHostPeer = { again, other };
}, 120_000);

let sameHostPeer: { again: Instance; other: Instance } | undefined;

/** The reload answer's warnings on `inst` (its shared-config comparison, made afresh). */
async function reloadWarnings(inst: Instance): Promise<Array<{ path: string; message: string }>> {
  const r = await fetch(`${inst.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${inst.instance().adminToken}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { warnings: Array<{ path: string; message: string }> }).warnings;
}

test("during a rolling upgrade to schema 17, an earlier version's row (no origin, its fingerprints salted otherwise) is not reported as holding a different secret for every key (review15 R7)", async () => {
  const { again } = sameHostPeer ?? {};
  if (!again) throw new Error("the first test did not leave its instances");
  const sql = new SQL(dbUrl);
  try {
    const own = (await sql`SELECT parts FROM instance_configs WHERE label = ${again.url}`) as Array<{ parts: string }>;
    expect(own).toHaveLength(1);
    // what an instance of a build before schema 17 with the same file writes: the same values, the secret
    // fingerprinted with the key's name alone (another 12 hex digits), no origin column value
    const parts = { ...(JSON.parse(own[0]!.parts) as Record<string, string>), "keys.ci.secret": JSON.stringify("0123456789ab") };
    const oldParts = { ...parts, "settings.alerts.quota_thresholds": "[0.5]" };
    await sql.unsafe(
      `INSERT INTO instance_configs (instance_id, label, parts, updated_at) VALUES ('old-build', 'http://old.example:1', $1, (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
      [JSON.stringify(oldParts)],
    );
    // a row of this build with that other fingerprint: its secret is reported
    await sql.unsafe(
      `INSERT INTO instance_configs (instance_id, label, parts, updated_at, origin) VALUES ('new-build', 'http://new.example:1', $1, (extract(epoch from clock_timestamp()) * 1000)::bigint, 'elsewhere')`,
      [JSON.stringify(parts)],
    );
  } finally {
    await sql.close();
  }
  const found = (await reloadWarnings(again)).filter((w) => w.message.includes("example:1"));
  expect(found.map((w) => w.message)).toEqual([
    `keys.ci.secret differs between here and http://new.example:1 (a different secret)`,
    `settings.alerts.quota_thresholds is [0.8,0.95] here and [0.5] on http://old.example:1`,
  ]);
}, 60_000);
