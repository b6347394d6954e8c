/**
 * The CLI against a running instance (SPEC 2.2): keys create/list/revoke with require_api_key on,
 * check-config, one-line failures when no instance runs, and --url/--key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { SOURCE_CLI, startInstance, stopInstance, type Instance } from "../support/instance.ts";

let fake: FakeUpstream;
let inst: Instance;
let scratch: string;

const YAML = (fake: string) => `
server:
  require_api_key: true
providers:
  - id: oai
    kind: openai
    base_url: "${fake}/v1"
  - id: oai-eu
    kind: openai
    base_url: "${fake}/v1"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
  - { id: oai-eu-1, provider: oai-eu, api_key: "env:FAKE_KEY" }
`;

beforeAll(async () => {
  fake = await startFakeUpstream();
  scratch = mkdtempSync(join(tmpdir(), "switchyard-cli-"));
  inst = await startInstance({ yaml: YAML(fake.url), env: { FAKE_KEY: "fake-key-cli" }, timeoutMs: 90_000 });
}, 120_000);
afterAll(async () => {
  await stopInstance(inst);
  await fake?.stop();
  rmSync(inst?.dataDir ?? "/nonexistent", { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * A test of several CLI runs: each starts bun on the CLI's source, ~1 s on a quiet machine, 3-5 s at load
 * 40 here, where "keys disable …" (about eight runs) timed out at 30 s and bun, ending the test, killed
 * the file's instance too ("killed 2 dangling processes"): every later test then read "no running
 * switchyard instance found". A bound several times what those runs take.
 */
const CLI_TEST_MS = 150_000;

/** Runs the CLI from source; the environment names no data directory unless given. */
function cli(args: string[], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
const lines = (s: string) => s.split("\n").filter((l) => l.length > 0);

const chat = (key?: string) =>
  fetch(`${inst.url}/v1/chat/completions`, {
    method: "POST",
    headers: key ? { authorization: `Bearer ${key}` } : {},
    body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
  });

describe("keys", () => {
  let secret: string;

  test("keys create prints the secret alone on the last line, and it works as a Bearer key", async () => {
    const none = await chat();
    expect(none.status).toBe(401);
    expect(((await none.json()) as any).error.message).toBe("An API key is required: send a client key of this gateway as Authorization: Bearer KEY or x-api-key: KEY (switchyard keys create NAME makes one).");
    const r = cli(["keys", "create", "laptop", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    secret = out.at(-1)!;
    expect(secret).toMatch(/^\S{20,}$/);
    expect(out.slice(0, -1).join("\n")).not.toContain(secret);
    expect(out[0]).toBe("created key laptop; the secret is shown once:");
    const res = await chat(secret);
    expect(res.status).toBe(200);
  }, CLI_TEST_MS);

  test("keys list shows the key without its secret", () => {
    const r = cli(["keys", "list", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("laptop");
    expect(r.stdout).not.toContain(secret);
    const j = cli(["keys", "list", "--json", "--data-dir", inst.dataDir]);
    const keys = JSON.parse(j.stdout).keys as Array<Record<string, unknown>>;
    expect(keys.find((k) => k.name === "laptop")).toMatchObject({ name: "laptop", source: "db" });
    expect(j.stdout).not.toContain(secret);
  }, CLI_TEST_MS);

  test("keys rotate prints the new secret alone on its last line; with --grace the old one keeps working until the time it names", async () => {
    const r = cli(["keys", "rotate", "laptop", "--grace", "10m", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toMatch(/^rotated key laptop: its limits and their use are kept, the old secret is accepted until \d{4}-\d\d-\d\dT[\d:.]+Z; the new secret is shown once:$/);
    const fresh = out[1]!;
    expect(fresh).toMatch(/^sy-/);
    expect((await chat(fresh)).status).toBe(200);
    expect((await chat(secret)).status).toBe(200);
    // keys list says when it was rotated and until when the old secret works (try18 D16: nothing did)
    const until = out[0]!.match(/accepted until (\S+);/)![1];
    const listed = lines(cli(["keys", "list", "--data-dir", inst.dataDir]).stdout).find((l) => l.startsWith("laptop "));
    expect(listed).toMatch(new RegExp(`^laptop\\s+sy-\\S{5}…\\s+db\\s+-\\s+\\S+\\s+active\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ, old secret until ${until!.replace(/\.\d{3}Z$/, "Z")}\\s`));
    const bad = cli(["keys", "rotate", "laptop", "--grace", "soon", "--data-dir", inst.dataDir]);
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)).toEqual(["--grace must be 0 or look like 30s, 10m, 24h or 7d"]);
    secret = fresh;
  }, CLI_TEST_MS);

  test("keys disable refuses the key's requests with a 403 saying it is disabled, keys list says since when; keys enable serves them again (G16)", async () => {
    const off = cli(["keys", "disable", "laptop", "--data-dir", inst.dataDir]);
    expect({ code: off.code, out: lines(off.stdout) }).toEqual({ code: 0, out: ["disabled key laptop: its requests are refused (403 key_disabled) until switchyard keys enable laptop; its limits and their use are kept"] });
    const refused = await chat(secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error).toEqual({
      type: "permission_error",
      code: "key_disabled",
      param: null,
      message: 'Client key "laptop" is disabled on this gateway for now: its requests are refused until an operator enables it again (switchyard keys enable laptop).',
    });
    const listed = lines(cli(["keys", "list", "--data-dir", inst.dataDir]).stdout).find((l) => l.startsWith("laptop "));
    expect(listed).toMatch(/^laptop\s+sy-\S{5}…\s+db\s+-\s+\S+\s+disabled \d{4}-\d\d-\d\dT[\d:.]+Z\s/);
    const json = JSON.parse(cli(["keys", "list", "--json", "--data-dir", inst.dataDir]).stdout).keys.find((k: any) => k.name === "laptop");
    expect(typeof json.disabledAt).toBe("number");
    const on = cli(["keys", "enable", "laptop", "--data-dir", inst.dataDir]);
    expect({ code: on.code, out: lines(on.stdout) }).toEqual({ code: 0, out: ["enabled key laptop: its requests are served again"] });
    expect((await chat(secret)).status).toBe(200);
    const nobody = cli(["keys", "disable", "nobody", "--data-dir", inst.dataDir]);
    expect({ code: nobody.code, err: lines(nobody.stderr) }).toEqual({ code: 1, err: ["error 404: No active key named nobody: disable or enable an active stored key (switchyard keys list)."] });
  }, CLI_TEST_MS);

  test("a second create of the same name fails in one line; keys revoke makes the key fail with 401", async () => {
    const dup = cli(["keys", "create", "laptop", "--data-dir", inst.dataDir]);
    expect(dup.code).not.toBe(0);
    expect(lines(dup.stderr)).toEqual(['error 409: a key named "laptop" already exists: revoke it first (switchyard keys revoke "laptop") or choose another name']);
    const r = cli(["keys", "revoke", "laptop", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    const res = await chat(secret);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error).toMatchObject({
      type: "authentication_error",
      message: "The API key is not valid for this gateway: it is not one of its client keys, or it was revoked (switchyard keys list shows them; switchyard keys create NAME makes one).",
    });
    const again = cli(["keys", "revoke", "laptop", "--data-dir", inst.dataDir]);
    expect(again.code).not.toBe(0);
    expect(lines(again.stderr)).toHaveLength(1);
  }, CLI_TEST_MS);
});

describe("key names", () => {
  const RULE = 'may use letters, digits, ".", "_" and "-" only, starting with a letter or digit (the rule for keys[].name in the config file), e.g. laptop or ci-runner';
  const names = () => (JSON.parse(cli(["keys", "list", "--json", "--data-dir", inst.dataDir]).stdout).keys as Array<{ name: string }>).map((k) => k.name);

  test("keys create refuses a name with a space, a control or invisible character, a slash, or over 64 characters, in one line naming the rule; none is made", () => {
    for (const [name, shown] of [
      ["my laptop", '"my laptop"'],
      ["bell\u0007", '"bell\\u{7}"'],
      ["zero\u200bwidth", '"zero\\u{200b}width"'],
      ["../admin", '"../admin"'],
      ["", undefined],
      ["   ", undefined],
      ["k".repeat(65), undefined],
    ] as const) {
      const r = cli(["keys", "create", name, "--data-dir", inst.dataDir]);
      const stderr = lines(r.stderr);
      expect({ name, code: r.code, lines: stderr.length }).toEqual({ name, code: name === "" ? 2 : 1, lines: 1 });
      if (shown) expect(stderr[0]).toBe(`error 400: name ${shown} ${RULE}`);
      else if (name.length > 64) expect(stderr[0]).toBe("error 400: name is at most 64 characters; this one has 65");
      else if (name !== "") expect(stderr[0]).toBe("error 400: name must not be empty (e.g. laptop or ci-runner)");
      expect(r.stdout).toBe("");
    }
    expect(names().filter((n) => !/^[a-z]+$/.test(n))).toEqual([]);
  }, CLI_TEST_MS);

  test("surrounding spaces are dropped; a name that differs from an active key's only in case is refused (409)", async () => {
    const made = cli(["keys", "create", "  desk  ", "--data-dir", inst.dataDir]);
    expect(made.code).toBe(0);
    expect(lines(made.stdout)[0]).toBe("created key desk; the secret is shown once:");
    expect(names()).toContain("desk");
    const twin = cli(["keys", "create", "Desk", "--data-dir", inst.dataDir]);
    expect(lines(twin.stderr)).toEqual(['error 409: a key named "desk" already exists (names differ only in case): choose another name']);
    // The admin API answers in its JSON error format, naming the field.
    const res = await fetch(`${inst.url}/admin/api/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${JSON.parse(readFileSync(join(inst.dataDir, "instance.json"), "utf8")).adminToken}` },
      body: JSON.stringify({ name: "tab\there" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: `name "tab\\u{9}here" ${RULE}`, type: "invalid_request_error", param: "name", code: null } });
  }, CLI_TEST_MS);
});

describe("usage shows what the token savers removed (SPEC S-4)", () => {
  test("usage --by model: one row per provider/model (two providers serving gpt-saver are two rows, as on the dashboard); the saved column sums the requests' estimated tokens; --json (GET /admin/api/usage) carries savedTokens and savedChars", async () => {
    const log = Array.from({ length: 300 }, (_, i) => `2026-11-30T07:43:${String(i % 60).padStart(2, "0")}.000Z WARN  db: connection refused, retry ${i + 1}/300`).join("\n") + "\n";
    const key = lines(cli(["keys", "create", "saver", "--data-dir", inst.dataDir]).stdout).at(-1)!;
    const res = await fetch(`${inst.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "oai/gpt-saver",
        messages: [
          { role: "user", content: "why does it not start?" },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "sh", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c1", content: log },
        ],
      }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const sent = fake.requests.at(-1)!.body.messages[2].content as string;
    const saved = Math.round((log.length - sent.length) / 4);
    expect(saved).toBeGreaterThan(1000);

    // the same model id from a second provider: its own row, not added to oai's
    const other = await fetch(`${inst.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ model: "oai-eu/gpt-saver", messages: [{ role: "user", content: "hi" }] }) });
    expect(other.status).toBe(200);
    await other.text();

    const usage = cli(["usage", "--by", "model", "--data-dir", inst.dataDir]);
    expect(usage.code).toBe(0);
    expect(lines(usage.stdout)[0]).toMatch(/^model\s+requests\s/);
    expect(lines(usage.stdout).filter((l) => l.includes("gpt-saver"))).toEqual([
      expect.stringMatching(/^oai-eu\/gpt-saver\s+1\s+0\s+0\s+11\s+7\s+0\s+0\s+0\s+0\s/),
      expect.stringMatching(new RegExp(`^oai/gpt-saver\\s+1\\s+0\\s+0\\s+11\\s+7\\s+0\\s+0\\s+0\\s+${saved}\\s`)),
    ]);
    const json = JSON.parse(cli(["usage", "--by", "model", "--json", "--data-dir", inst.dataDir]).stdout);
    expect(json.rows.find((r: any) => r.group === "oai/gpt-saver")).toMatchObject({ requests: 1, savedTokens: saved, savedChars: log.length - sent.length });
    expect(json.rows.find((r: any) => r.group === "oai-eu/gpt-saver")).toMatchObject({ requests: 1, savedTokens: 0 });
    expect(json.rows.some((r: any) => r.group === "gpt-saver")).toBe(false);
  }, 90_000);
});

describe("keys with limits (SPEC 9.6)", () => {
  test("keys create --rpm --tpm --budget --models: the key is limited; keys list and usage --by key show limits, this minute's use, cost and budget use", async () => {
    const r = cli(["keys", "create", "capped", "--rpm", "2", "--tpm", "5000", "--budget", "1d:tokens:1000", "--budget", "5h:usd:2.5", "--models", "oai/*,fast", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    const key = lines(r.stdout).at(-1)!;
    expect((await chat(key)).status).toBe(200);
    expect((await chat(key)).status).toBe(200);
    const third = await chat(key);
    expect(third.status).toBe(429);
    expect(((await third.json()) as any).error.message).toContain("2 requests per minute (rpm)");

    const list = cli(["keys", "list", "--data-dir", inst.dataDir]);
    expect(lines(list.stdout)[0]).toMatch(/^name\s+prefix\s+source\s+scopes\s+created\s+state\s+rotated\s+this minute\s+limits$/);
    const row = lines(list.stdout).find((l) => l.startsWith("capped"))!;
    // this minute's use of rpm / tpm, as the dashboard's Keys page shows it (GET /admin/api/keys use.minute):
    // the two admitted requests (the refused third not counted) and their 36 tokens
    expect(row).toContain(" 2 of 2 requests (limit reached), 36 of 5,000 tokens ");
    // a key without rpm / tpm has "-" there
    // laptop was rotated before it was revoked: when (its old secret's grace no longer said)
    expect(lines(list.stdout).find((l) => l.startsWith("laptop "))).toMatch(/^laptop\s+sy-\S{5}…\s+db\s+-\s+\S+\s+revoked \S+\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+-\s+-$/);
    // the secret's first 8 characters, so a secret a developer pastes can be matched to its key (try18 D4)
    expect(row.split(/\s+/).slice(0, 3)).toEqual(["capped", `${key.slice(0, 8)}…`, "db"]);
    expect(row).toContain("rpm 2, tpm 5,000, models oai/*|fast, 1d 36 / 1,000 tokens (4 %), resets ");
    expect(row).toContain("5h $0.00 / $2.50 (0 %), resets ");

    const usage = cli(["usage", "--by", "key", "--data-dir", inst.dataDir]);
    expect(usage.code).toBe(0);
    const header = lines(usage.stdout)[0];
    // the first column is named for the grouping (it said "group")
    expect(header).toMatch(/^key\s+requests\s+errors\s+refused\s+input\s+output\s+cache_read\s+cache_write\s+reasoning\s+saved\s+cost\s+budgets/);
    const capped = lines(usage.stdout).find((l) => l.startsWith("capped"))!;
    // 3 requests (one refused, no error: refused is its own column), 22 input, 14 output, nothing saved; gpt-test has no price: "2 unpriced"
    // spelled out (it said "? (+2 unpriced)"), and a legend line says what that means
    expect(capped).toMatch(/^capped\s+3\s+0\s+1\s+22\s+14\s+0\s+0\s+0\s+0\s+2 unpriced\s+1d 36 \/ 1,000 tokens \(4 %\)/);
    expect(lines(usage.stdout)).toContain("unpriced: requests that used a model without a price (the one that served them or a failed attempt's); the cost counts only the part that had a price (give the model a settings.pricing entry)");

    // Revoked, the key has no use to show: its budgets read as its limits, not as a window at 0 % never started
    expect(cli(["keys", "revoke", "capped", "--data-dir", inst.dataDir]).code).toBe(0);
    const revoked = lines(cli(["keys", "list", "--data-dir", inst.dataDir]).stdout).find((l) => l.startsWith("capped"))!;
    expect(revoked).toMatch(/ - +rpm 2, tpm 5,000, models oai\/\*\|fast, 1d budget 1,000 tokens, 5h budget \$2\.50$/);
  }, CLI_TEST_MS);

  test("--models with a provider/* pattern of no provider of the gateway is refused in one line naming the providers; no key is made", () => {
    const r = cli(["keys", "create", "glmonly", "--models", "oai/*,glm/*", "--data-dir", inst.dataDir]);
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(lines(r.stderr)).toEqual(['error 400: limits.models[1]: "glm/*" names no provider of this gateway: there is no provider "glm"; the providers are anthropic, openai, gemini, cc, cx, oai, oai-eu']);
    expect(cli(["keys", "list", "--data-dir", inst.dataDir]).stdout).not.toContain("glmonly");
  }, CLI_TEST_MS);

  test("--models given twice adds both lists, as --budget does (it kept only the last, without a word)", () => {
    const r = cli(["keys", "create", "twolists", "--models", "oai/*", "--models", "fast,oai/*", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(0);
    const row = lines(cli(["keys", "list", "--data-dir", inst.dataDir]).stdout).find((l) => l.startsWith("twolists"))!;
    expect(row).toMatch(/ models oai\/\*\|fast$/);
    expect(cli(["keys", "revoke", "twolists", "--data-dir", inst.dataDir]).code).toBe(0);
  }, CLI_TEST_MS);

  test("a malformed --budget fails in one line before calling the instance", () => {
    const r = cli(["keys", "create", "bad", "--budget", "2h:tokens:5", "--data-dir", inst.dataDir]);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(['--budget takes WINDOW:tokens:AMOUNT or WINDOW:usd:AMOUNT with WINDOW 5h, 1d, 7d or 30d (e.g. 1d:usd:25), not "2h:tokens:5"']);
  });
});

describe("calls list", () => {
  test("--limit that is not a whole number from 1 to 1000 fails in one line naming the flag; a client's very long model name is cut in the table, whole in --json", async () => {
    const key = lines(cli(["keys", "create", "caller", "--data-dir", inst.dataDir]).stdout).at(-1)!;
    const longModel = `oai/${"m".repeat(300)}`;
    const res = await fetch(`${inst.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: longModel, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    // a usage error (exit 2) said before the instance is asked, as usage's --by and --since (it was exit 1, the admin API's 400)
    for (const limit of ["abc", "0", "5000", "1.5"]) {
      const r = cli(["calls", "list", "--limit", limit, "--data-dir", inst.dataDir]);
      expect([r.code, r.stdout]).toEqual([2, ""]);
      expect(lines(r.stderr)).toEqual([`--limit must be a whole number from 1 to 1000, not "${limit}"`]);
    }
    const one = cli(["calls", "list", "--limit", "1", "--data-dir", inst.dataDir]);
    expect(one.code).toBe(0);
    // the table, then (the model has no price) a blank line and the legend saying what "unpriced" means
    const [table, legend] = one.stdout.trimEnd().split("\n\n");
    const [head, row] = lines(table!);
    expect(lines(table!)).toHaveLength(2);
    expect(head).toMatch(/^time\s+route_id\s+model\s+target\s+status\s+outcome\s+ms\s+cost\s+transport\s+instance$/);
    expect(row).toMatch(/\sunpriced\s/);
    expect(legend).toStartWith("unpriced: the call used a model without a price");
    expect(row).toContain(`oai/${"m".repeat(59)}…`);
    expect(row).not.toContain("m".repeat(61));
    expect(row!.length).toBeLessThan(250);
    const json = JSON.parse(cli(["calls", "list", "--limit", "1", "--json", "--data-dir", inst.dataDir]).stdout);
    expect(json.calls[0].requestedModel).toBe(longModel);
  }, CLI_TEST_MS);
});

describe("--url and --key", () => {
  test("with require_api_key on: a key with the admin scope works; none or a wrong one is a 401, one without the scope a 403 naming it, each in one line", async () => {
    // A misspelt scope is refused, not stored as a key that silently lacks admin.
    const typo = cli(["keys", "create", "ops", "--scope", "admn", "--data-dir", inst.dataDir]);
    expect([typo.code, typo.stdout, lines(typo.stderr)]).toEqual([1, "", ['error 400: scopes[0]: unknown scope "admn": the only scope is admin']]);
    const adminKey = lines(cli(["keys", "create", "ops", "--scope", "admin", "--data-dir", inst.dataDir]).stdout).at(-1)!;
    const plainKey = lines(cli(["keys", "create", "ci", "--data-dir", inst.dataDir]).stdout).at(-1)!;
    const withKey = cli(["keys", "list", "--url", inst.url, "--key", adminKey]);
    expect(withKey.code).toBe(0);
    expect(withKey.stdout).toContain("ops");
    const viaEnv = cli(["keys", "list", "--url", inst.url], { SWITCHYARD_ADMIN_KEY: adminKey });
    expect(viaEnv.code).toBe(0);
    const created = cli(["keys", "create", "remote", "--url", `${inst.url}/`, "--key", adminKey]);
    expect(created.code).toBe(0);
    expect((await chat(lines(created.stdout).at(-1))).status).toBe(200);

    for (const r of [cli(["keys", "list", "--url", inst.url]), cli(["keys", "list", "--url", inst.url, "--key", "nonsense"])]) {
      expect(r.code).not.toBe(0);
      expect(lines(r.stderr)).toEqual(["error 401: This admin API needs a key with the admin scope."]);
      expect(r.stdout).toBe("");
    }
    // a valid key without the scope is named as such, not taken for a wrong one (as the dashboard's sign-in says)
    const plain = cli(["keys", "list", "--url", inst.url, "--key", plainKey]);
    expect([plain.code, plain.stdout]).toEqual([1, ""]);
    expect(lines(plain.stderr)).toEqual(["error 403: Key ci has no admin scope; the admin API needs a key created with --scope admin (switchyard keys create NAME --scope admin) or the instance's admin token."]);
    // Eight CLI processes in a row: on a loaded 2-core machine that took over 30 s.
  }, 90_000);
});

describe("check-config", () => {
  test("a good file exits 0", () => {
    const f = join(scratch, "good.yaml");
    writeFileSync(f, YAML("http://127.0.0.1:1"));
    const r = cli(["check-config", f], { FAKE_KEY: "k" });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    // The same file without the environment its secret names: the path and the variable, not a value.
    const unset = cli(["check-config", f]);
    expect(unset.code).toBe(1);
    expect(unset.stdout + unset.stderr).toContain("accounts[0].api_key");
    expect(unset.stdout + unset.stderr).toContain("FAKE_KEY");
  }, CLI_TEST_MS);

  test("a bad file names the YAML path of the problem and exits 1", () => {
    const f = join(scratch, "bad.yaml");
    writeFileSync(f, `
providers:
  - id: oai
    kind: openai
    base_url: "http://127.0.0.1:1/v1"
combos:
  - name: c
    targets:
      - model: oai/gpt-x
      - model: nosuch/model
`);
    const r = cli(["check-config", f]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("combos[0].targets[1].model");
    const missing = cli(["check-config", join(scratch, "missing.yaml")]);
    expect(missing.code).toBe(1);
  }, CLI_TEST_MS);
});

describe("a fresh instance", () => {
  test("calls list, keys list and usage each say in one line that there is nothing yet, and what fills it; --json keeps the empty lists", async () => {
    const fresh = await startInstance({ yaml: `providers:\n  - { id: oai, kind: openai, base_url: "${fake.url}/v1" }\n` });
    try {
      const run = (...args: string[]) => {
        const r = cli([...args, "--data-dir", fresh.dataDir]);
        expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
        return r.stdout;
      };
      expect(run("calls", "list")).toBe("no calls yet: point a client at this gateway (switchyard setup claude-code|codex|gemini does it for those CLIs); each request is listed here once it finishes\n");
      expect(run("keys", "list")).toBe("no client keys yet: switchyard keys create NAME makes one (callers on this machine need none unless server.require_api_key is set)\n");
      expect(run("usage", "--since", "1h")).toBe("no requests in the last 1h: each request is counted here once it finishes (--since 7d looks further back)\n");
      expect(JSON.parse(run("calls", "list", "--json")).calls).toEqual([]);
      expect(JSON.parse(run("keys", "list", "--json")).keys).toEqual([]);
      // a request refused before it named a model: its model cell reads "-", not blank
      await (await fetch(`${fresh.url}/v1/chat/completions`, { method: "POST", body: "{not json" })).text();
      let listed = lines(run("calls", "list"));
      for (let i = 0; i < 50 && listed.length < 2; i++, await Bun.sleep(100)) listed = lines(run("calls", "list")); // the usage flush runs each second
      const row = listed[1].split(/ {2,}/);
      // the instance that served it (newuser12a G11): this machine's name and the port it listens on
      expect(row.slice(2)).toEqual(["-", "-", "400", "rejected", expect.stringMatching(/^\d+$/), "-", "http", `${hostname()}:${new URL(fresh.url).port}`]);
    } finally {
      await stopInstance(fresh);
      rmSync(fresh.dataDir, { recursive: true, force: true });
    }
  }, CLI_TEST_MS);
});

describe("no running instance", () => {
  const oneLine = (r: ReturnType<typeof cli>) => {
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/no running switchyard instance/i);
  };

  test("an empty data directory: every instance command says so in one line and exits non-zero", () => {
    const empty = mkdtempSync(join(scratch, "empty-"));
    for (const args of [["keys", "list"], ["keys", "create", "x"], ["keys", "revoke", "x"], ["usage"], ["calls", "list"], ["calls", "inspect", "sy_x"]]) {
      oneLine(cli([...args, "--data-dir", empty]));
    }
    // The default data directory comes from SWITCHYARD_HOME.
    oneLine(cli(["keys", "list"], { SWITCHYARD_HOME: empty }));
  }, CLI_TEST_MS);

  test("--url to a port nobody listens on, and a stale instance.json left by a killed instance", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("x") });
    const deadUrl = `http://127.0.0.1:${server.port}`;
    server.stop(true);
    oneLine(cli(["keys", "list", "--url", deadUrl]));
    const stale = mkdtempSync(join(scratch, "stale-"));
    writeFileSync(join(stale, "instance.json"), JSON.stringify({ url: deadUrl, pid: 999999, adminToken: "sy-admin-stale" }));
    const r = cli(["usage", "--data-dir", stale]);
    oneLine(r);
    expect(r.stderr.trim()).toBe(`no running switchyard instance answers at ${deadUrl}, the address in ${join(stale, "instance.json")} (left by an instance that has stopped); start one with switchyard start (scripts/start in a source checkout)`);
    // setup too: nothing is written for an address nobody answers at.
    const setup = cli(["setup", "gemini", "--data-dir", stale]);
    oneLine(setup);
    expect(existsSync(join(scratch, ".gemini"))).toBe(false);
  }, CLI_TEST_MS);
});
