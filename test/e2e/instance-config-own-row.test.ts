/**
 * An instance killed without a clean stop left its `instance_configs` row (its values of the shared
 * config) for up to 90 s; restarted at once on the same data directory with a changed file, it read
 * that row as another running instance's and warned that "instances sharing this database enforce
 * different config for the shared pool", naming its own previous URL. It now recognises its own
 * previous row (the same host and data directory) and replaces it: no warning, one row. A real
 * instance on a real PostgreSQL, killed with SIGKILL and started again with `ci` at another rpm; then a
 * second instance on another data directory with the first file: that one is still told apart. Also
 * review15 R7 (an earlier build's row during a rolling upgrade: its secrets are not compared) and R6
 * (two data directories with one path on hosts of one name each keep their row).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until as pollUntil } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-own-row", KEY_CI: "sy-ci-client-key-own-row-000001", SWITCHYARD_SHARED_CONFIG_MS: "300" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let dbUrl: string;
const started: Instance[] = [];
/** Directories this file made itself, removed at the end. */
const scratch: string[] = [];

const yamlOf = (rpm: number) => `providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: ci, key: env:KEY_CI, limits: { rpm: ${rpm} } }
`;

/** Polls every 100 ms until `cond` holds; fails after `ms`. */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string) => pollUntil(cond, ms, what, 100);

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
  const inst = await startInstance({ yaml, env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000, ...(dataDir ? { dataDir } : {}) });
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
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
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

test("two live instances whose data directories have the same path on hosts of the same name (containers on host networking, each its own /data volume) keep a row each (review15 R6)", async () => {
  // one path, two directories: the link points at the first while it starts, then at the second, as
  // /data is one volume in one container and another in the next
  const root = mkdtempSync(join(tmpdir(), "switchyard-r6-"));
  scratch.push(root);
  const link = join(root, "data");
  const point = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    symlinkSync(dir, `${link}.next`);
    renameSync(`${link}.next`, link);
  };
  point(join(root, "volume-a"));
  const a = await start(yamlOf(30), link);
  await until(async () => (await rows()).includes(a.url), 15_000, "the first container's row");
  point(join(root, "volume-b"));
  const b = await start(yamlOf(30), link);
  await until(async () => (await rows()).includes(b.url), 15_000, "the second container's row");
  // several checks of 300 ms by each: neither takes the other's row for its own predecessor's
  for (let i = 0; i < 15; i++) {
    const labels = await rows();
    expect(labels).toContain(a.url);
    expect(labels).toContain(b.url);
    await Bun.sleep(100);
  }
}, 90_000);
