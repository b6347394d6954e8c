/**
 * Two instances on one PostgreSQL whose config files disagree about the shared pool (newuser12a G24:
 * one key with other limits, other `settings.pricing`, enforced each its own without a word). Two real
 * `switchyard start --database postgres://…` processes: A with `ci` at rpm 60 and one price, B with `ci`
 * at rpm 10, another price and a key A does not have. B warns at its start naming each difference with
 * both values (never a secret); A warns at its next check (every 300 ms here,
 * `SWITCHYARD_SHARED_CONFIG_MS`); a reload's answer on A carries the differences as warnings; after A's
 * file is made like B's and reloaded, A's answer has none and A says the instances agree again.
 * Their alert webhooks differ too (try20 D3: a rotated URL on one instance went unwarned, and the
 * alerts the other claimed kept going to the old one): warned with scheme, host and a hash, never the
 * URL's path or query, where its token is.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { until } from "../support/until.ts";

const ENV = { UP_KEY: "sk-upstream-differs", KEY_CI: "sy-ci-client-key-differs-000001", KEY_DESK: "sy-desk-client-key-differs-0001", SWITCHYARD_SHARED_CONFIG_MS: "300" };

let pg: TestPostgres;
let upstream: FakeUpstream;
let a: Instance;
let b: Instance;

/** Webhook URLs with a token in the path and the query (port 9: nothing is posted in this test). */
const HOOK_A = "http://127.0.0.1:9/hook/T0KEN-old-a1b2c3?token=s3cr3t-old";
const HOOK_B = "http://127.0.0.1:9/hook-new/T0KEN-new-d4e5f6";
const shown = (url: string) => `"http://127.0.0.1:9/… (sha256 ${createHash("sha256").update(url).digest("hex").slice(0, 8)})"`;

const yamlOf = (rpm: number, input: number, extraKey: boolean, hook = extraKey ? HOOK_B : HOOK_A) => `server: { require_api_key: true }
providers:
  - { id: up, kind: openai, base_url: "${upstream.url}/v1" }
accounts:
  - { id: up-1, provider: up, api_key: env:UP_KEY }
keys:
  - { name: ci, key: env:KEY_CI, limits: { rpm: ${rpm} } }
${extraKey ? "  - { name: desk, key: env:KEY_DESK }\n" : ""}settings:
  alerts: { webhook: "${hook}" }
  pricing:
    up/gpt-x: { input: ${input}, output: 2 }
`;

const warning = (inst: Instance) => inst.stdout.map((l) => JSON.parse(l.startsWith("{") ? l : "{}")).find((j: any) => typeof j.msg === "string" && j.msg.startsWith("instances sharing this database enforce different config"));

beforeAll(async () => {
  pg = await startPostgres();
  const dbUrl = await pg.createDatabase("differs");
  upstream = await startFakeUpstream();
  a = await startInstance({ yaml: yamlOf(60, 1, false), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
  b = await startInstance({ yaml: yamlOf(10, 3, true), env: ENV, args: ["--database", dbUrl], timeoutMs: 90_000 });
}, 300_000);

afterAll(async () => {
  await Promise.all([stopInstance(a), stopInstance(b)]);
  await upstream?.stop();
  await pg?.destroy();
}, 60_000);

test("instances whose files give one key other limits and other prices warn naming each difference; a reload's answer says so until the files agree", async () => {
  // B, started second, warns at its start
  await until(() => warning(b) !== undefined, 15_000, "B's warning");
  const wb = warning(b);
  expect(wb.level).toBe("warn");
  // a key one file only declares is one entry, one sentence (try20 D7: four, one "secret is (differs) here and not declared")
  expect(wb.differences).toEqual(["keys.ci.limits", "keys.desk", "settings.alerts.webhook", "settings.pricing"]);
  expect(wb.msg).toContain(`settings.alerts.webhook is ${shown(HOOK_B)} here and ${shown(HOOK_A)} on ${a.url}`);
  expect(wb.msg).toContain(`keys.ci.limits is {"rpm":10} here and {"rpm":60} on ${a.url}`);
  expect(wb.msg).toContain(`settings.pricing is {"up/gpt-x":{"input":3,"output":2}} here and {"up/gpt-x":{"input":1,"output":2}} on ${a.url}`);
  expect(wb.msg).toContain(`key desk is declared in this instance's config file and not in ${a.url}'s;`);
  expect(wb.msg).not.toContain("(differs)");
  expect(wb.msg).not.toContain("keys.desk.");
  // A, started first, at its next check
  await until(() => warning(a) !== undefined, 15_000, "A's warning");
  expect(warning(a).msg).toContain(`keys.ci.limits is {"rpm":60} here and {"rpm":10} on ${b.url}`);
  expect(warning(a).msg).toContain(`key desk is not declared in this instance's config file and is in ${b.url}'s;`);
  expect(warning(a).msg).toContain(`settings.alerts.webhook is ${shown(HOOK_A)} here and ${shown(HOOK_B)} on ${b.url}`);
  for (const line of [...a.stdout, ...a.stderr, ...b.stdout, ...b.stderr]) {
    expect(line).not.toMatch(/T0KEN|s3cr3t|hook-new/);
    expect(line).not.toContain(ENV.KEY_CI);
    expect(line).not.toContain(ENV.KEY_DESK);
  }

  const reload = async () => {
    const r = await fetch(`${a.url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${a.instance().adminToken}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { warnings: Array<{ path: string; message: string }> }).warnings;
  };
  const before = await reload();
  expect(before.find((w) => w.path === "keys.ci.limits")?.message).toBe(`keys.ci.limits is {"rpm":60} here and {"rpm":10} on ${b.url}`);
  // the dashboard's reload card shows these warnings
  expect(before.find((w) => w.path === "settings.alerts.webhook")?.message).toBe(`settings.alerts.webhook is ${shown(HOOK_A)} here and ${shown(HOOK_B)} on ${b.url}`);

  // A's file made like B's: the reload's answer has no difference left, and A says they agree
  writeFileSync(a.configPath, yamlOf(10, 3, true));
  expect(await reload()).toEqual([]);
  await until(() => a.stdout.some((l) => l.includes("instances sharing this database now enforce the same config for the shared pool")), 15_000, "A's all-clear");
}, 90_000);
