/**
 * `switchyard keys set NAME --rpm N …` (tryout finding D3): a key's limits and tag changed from the
 * command line with `keys create`'s flags (`none` clears a limit), keeping its secret and the use of
 * its limits so far. Before, `keys set` was no command (exit 2, the keys usage): a key's limits were
 * changed only by revoking it and creating it again, a new secret and its budget from 0. `--scope admin`
 * gives the key the admin API, `--scope none` takes it away (before: an unknown option, exit 2).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleReply, startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { fakeProviders } from "../support/configs.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { cliOn } from "../support/source-cli.ts";

let fake: FakeUpstream;
let inst: Instance;
let scratch: string;

const YAML = (fake: string) => `server:\n  require_api_key: true\n${fakeProviders([["oai", "openai"]]).replaceAll("{{FAKE}}", fake)}`;

beforeAll(async () => {
  fake = await startFakeUpstream();
  // 10 in + 8 out: 18 tokens a request
  fake.handle((r) => simpleReply(r.format!, { text: "ok", model: r.model, usage: { input: 10, output: 8 } }, r.stream));
  scratch = mkdtempSync(join(tmpdir(), "switchyard-cli-set-"));
  inst = await startInstance({ yaml: YAML(fake.url), env: { FAKE_KEY: "fake-key-cli-set" }, timeoutMs: 90_000 });
}, 120_000);
afterAll(async () => {
  await stopInstance(inst);
  await fake?.stop();
  rmSync(inst?.dataDir ?? "/nonexistent", { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the CLI from source against the file's instance. */
const cli = (...args: string[]) => cliOn(inst.dataDir, args, { cwd: scratch, home: scratch });
const lines = (s: string) => s.split("\n").filter((l) => l.length > 0);

const chat = (key: string) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
  });

test("keys set --rpm --budget --tag: the next request is checked against them, the secret and the budget's use kept; none clears a limit; bad input said", async () => {
  const made = cli("keys", "create", "team", "--rpm", "1", "--budget", "1d:tokens:1000");
  expect(made.code).toBe(0);
  const key = lines(made.stdout).at(-1)!;
  expect((await chat(key)).status).toBe(200); // 18 of 1,000
  expect((await chat(key)).status).toBe(429); // its rpm of 1

  const set = cli("keys", "set", "team", "--rpm", "5", "--budget", "1d:tokens:2000", "--tag", "lead");
  expect({ code: set.code, stderr: set.stderr }).toEqual({ code: 0, stderr: "" });
  expect(lines(set.stdout)[0]).toBe("changed key team: its secret and the use of its limits so far are kept; the next request is checked against them");
  expect(lines(set.stdout)[1]).toStartWith("limits: rpm 5, 1d 18 / 2,000 tokens (1 %), resets ");
  expect(lines(set.stdout)[1]).toEndWith("; tag lead");
  expect((await chat(key)).status).toBe(200); // the same secret, under rpm 5

  const json = JSON.parse(cli("keys", "list", "--json").stdout).keys.filter((k: any) => k.name === "team");
  expect(json).toHaveLength(1);
  expect(json[0]).toMatchObject({ tag: "lead", limits: { rpm: 5, budgets: [{ window: "1d", tokens: 2000 }] }, use: { budgets: [{ used: 36 }] } });

  const cleared = cli("keys", "set", "team", "--rpm", "none", "--models", "oai/*", "--tag", "");
  expect(cleared.code).toBe(0);
  expect(lines(cleared.stdout)[1]).toStartWith("limits: models oai/*, 1d 36 / 2,000 tokens (2 %), resets ");
  expect(lines(cleared.stdout)[1]).not.toContain("tag");

  const nothing = cli("keys", "set", "team");
  expect(nothing.code).toBe(2);
  expect(nothing.stderr).toContain("keys set changes nothing without a limit, --tag or --scope");
  const bad = cli("keys", "set", "team", "--rpm", "0");
  expect({ code: bad.code, stderr: bad.stderr.trim() }).toEqual({ code: 2, stderr: '--rpm must be a positive whole number, not "0"' });
  const mixed = cli("keys", "set", "team", "--budget", "none", "--budget", "1d:tokens:5");
  expect(mixed.code).toBe(2);
  expect(mixed.stderr).toContain("--budget none clears the key's budgets");
  const nobody = cli("keys", "set", "nobody", "--rpm", "5");
  expect(nobody.code).toBe(1);
  expect(nobody.stderr).toContain("error 404: No active key named nobody");
  expect(JSON.parse(cli("keys", "list", "--json").stdout).keys.find((k: any) => k.name === "team").limits).toEqual({ models: ["oai/*"], budgets: [{ window: "1d", tokens: 2000 }] });
}, 150_000);

test("keys set --scope admin gives the key the admin API, --scope none takes it away; a misspelt scope is refused", async () => {
  const made = cli("keys", "create", "ops");
  expect(made.code).toBe(0);
  const key = lines(made.stdout).at(-1)!;
  const keysWith = async () => (await fetch(`${inst.url}/admin/api/keys`, { headers: { authorization: `Bearer ${key}` } })).status;
  expect(await keysWith()).toBe(403);

  const granted = cli("keys", "set", "ops", "--scope", "admin");
  expect({ code: granted.code, stderr: granted.stderr }).toEqual({ code: 0, stderr: "" });
  expect(lines(granted.stdout)[1]).toBe("limits: -; scopes admin");
  expect(await keysWith()).toBe(200);
  expect(JSON.parse(cli("keys", "list", "--json").stdout).keys.find((k: any) => k.name === "ops").scopes).toEqual(["admin"]);

  const typo = cli("keys", "set", "ops", "--scope", "admn");
  expect([typo.code, lines(typo.stderr)]).toEqual([1, ['error 400: scopes[0]: unknown scope "admn": the only scope is admin']]);
  const mixed = cli("keys", "set", "ops", "--scope", "none", "--scope", "admin");
  expect([mixed.code, mixed.stderr.trim()]).toEqual([2, "--scope none takes the key's scopes away: give it alone, not with --scope admin"]);
  expect(await keysWith()).toBe(200);

  const taken = cli("keys", "set", "ops", "--scope", "none");
  expect(taken.code).toBe(0);
  expect(lines(taken.stdout)[1]).toBe("limits: -; scopes none");
  expect(await keysWith()).toBe(403);
}, 60_000);

test("keys set --budget names each budget it removes (it replaces the key's budgets) and the command that keeps them all; a budget of the same window and unit changed is not removed", async () => {
  // try22 P11: lowering the 5h budget took the 1d USD cap away with nothing said but the limits left
  expect(cli("keys", "create", "dev1", "--budget", "5h:tokens:10000", "--budget", "1d:usd:5").code).toBe(0);
  const lowered = cli("keys", "set", "dev1", "--budget", "5h:tokens:9000");
  expect({ code: lowered.code, stderr: lowered.stderr }).toEqual({ code: 0, stderr: "" });
  const out = lines(lowered.stdout);
  expect(out[1]).toStartWith("limits: 5h 0 / 9,000 tokens (0 %)");
  expect(out.slice(2)).toEqual(["removed the key's 1d $5.00 budget", "(--budget replaces the key's budgets with those given; to keep every one: switchyard keys set dev1 --budget 5h:tokens:9000 --budget 1d:usd:5)"]);

  const back = cli("keys", "set", "dev1", "--budget", "5h:tokens:9000", "--budget", "1d:usd:5");
  expect(back.code).toBe(0);
  expect(lines(back.stdout)).toHaveLength(2); // changed + limits: nothing removed
  expect(JSON.parse(cli("keys", "list", "--json").stdout).keys.find((k: any) => k.name === "dev1").limits.budgets).toEqual([
    { window: "5h", tokens: 9000 },
    { window: "1d", usd: 5 },
  ]);
  const lowerBoth = cli("keys", "set", "dev1", "--budget", "5h:tokens:8000", "--budget", "1d:usd:4");
  expect(lines(lowerBoth.stdout)).toHaveLength(2);

  const cleared = cli("keys", "set", "dev1", "--budget", "none");
  expect(cleared.code).toBe(0);
  expect(lines(cleared.stdout).slice(2)).toEqual(["removed the key's 5h 8,000 tokens budget", "removed the key's 1d $4.00 budget"]);
}, 60_000);
