/**
 * The CLI never writes a client's control characters raw (README "Security"): a model name, an
 * upstream's error message or any other stored string holding ESC, OSC, BEL, CR or LF is shown escaped
 * (`\u001b`, `\r`, `\n`, as JSON writes them) in `calls list`, `calls inspect` and `usage`, so no client
 * can recolour, retitle or rewrite the operator's terminal or split a table row in two; `--json` stays
 * JSON with the strings whole.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { SOURCE_CLI, startInstance, stopInstance, type Instance } from "../support/instance.ts";

let fake: FakeUpstream;
let inst: Instance;

/** Colours the terminal red, sets its title (OSC … BEL). */
const ESCAPES = "oc/esc\u001b[31mRED\u001b[0m\u001b]0;pwned\u0007";
/** A header-like line of its own if written raw. */
const CRLF = "oc/m1\r\nX-Evil: 1";
/** The upstream's error message for `oc/fails`: clears the screen, a C1 CSI, a DEL. */
const UPSTREAM_ERROR = "bad\u001b[2J\u009b1mthing\u007f\r\nfake line";

beforeAll(async () => {
  fake = await startFakeUpstream();
  fake.handle((req) => ((req.body as { model?: string } | undefined)?.model === "fails" ? { status: 400, json: { error: { message: UPSTREAM_ERROR, type: "invalid_request_error" } } } : undefined));
  inst = await startInstance({
    yaml: `providers:\n  - { id: oc, kind: openai, base_url: "${fake.url}/v1" }\naccounts:\n  - { id: oc-1, provider: oc, api_key: "env:FAKE_KEY" }\n`,
    env: { FAKE_KEY: "fake-key-ctl" },
    timeoutMs: 90_000,
  });
}, 120_000);
afterAll(async () => {
  await stopInstance(inst);
  await fake?.stop();
  rmSync(inst?.dataDir ?? "/nonexistent", { recursive: true, force: true });
});

function cli(args: string[]) {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args, "--data-dir", inst.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** The bytes below 0x20 (and DEL, and C1) other than the layout's line breaks and tabs. */
const raw = (s: string) => [...s].filter((c) => /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(c)).map((c) => c.codePointAt(0)!.toString(16));

const chat = (model: string) =>
  fetch(`${inst.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) }).then(async (r) => (await r.text(), r.status));

test("calls list, calls inspect and usage show a client's control characters escaped, never raw; --json keeps them whole", async () => {
  expect(await chat(ESCAPES)).toBe(200);
  expect(await chat(CRLF)).toBe(200);
  expect(await chat("oc/fails")).toBe(400);

  // the calls are listed once they finish (the usage flush runs each second)
  let list = cli(["calls", "list"]);
  // the table's lines (a legend follows a blank line: these models have no price)
  const tableLines = (stdout: string) => stdout.split("\n\n")[0]!.split("\n").filter(Boolean);
  for (let i = 0; i < 50 && tableLines(list.stdout).length < 4; i++, await Bun.sleep(100)) list = cli(["calls", "list"]);
  expect(list.code).toBe(0);
  expect(raw(list.stdout)).toEqual([]);
  const rows = tableLines(list.stdout);
  // a header and one row a call: CR/LF split no row
  expect(rows).toHaveLength(4);
  expect(list.stdout).toContain("oc/esc\\u001b[31mRED\\u001b[0m\\u001b]0;pwned\\u0007");
  expect(list.stdout).toContain("oc/m1\\r\\nX-Evil: 1");
  expect(rows.some((r) => r.startsWith("X-Evil"))).toBe(false);

  const usage = cli(["usage", "--by", "model"]);
  expect(usage.code).toBe(0);
  expect(raw(usage.stdout)).toEqual([]);
  expect(usage.stdout).toContain("oc/esc\\u001b[31mRED\\u001b[0m\\u001b]0;pwned\\u0007");
  expect(usage.stdout.split("\n").filter((l) => l.includes("X-Evil"))).toEqual([expect.stringMatching(/^oc\/m1\\r\\nX-Evil: 1\s+1\s+0\s+0\s/)]);

  const calls = JSON.parse(cli(["calls", "list", "--json"]).stdout).calls as Array<{ routeId: string; requestedModel: string }>;
  expect(calls.map((c) => c.requestedModel).sort()).toEqual([CRLF, ESCAPES, "oc/fails"].sort());
  const byModel = (m: string) => calls.find((c) => c.requestedModel === m)!.routeId;

  const inspect = cli(["calls", "inspect", byModel(ESCAPES)]);
  expect(inspect.code).toBe(0);
  expect(raw(inspect.stdout)).toEqual([]);
  expect(inspect.stdout).toContain("requested   oc/esc\\u001b[31mRED\\u001b[0m\\u001b]0;pwned\\u0007 (openai-chat)");
  const crlf = cli(["calls", "inspect", byModel(CRLF)]);
  expect(raw(crlf.stdout)).toEqual([]);
  expect(crlf.stdout.split("\n").some((l) => l.startsWith("X-Evil"))).toBe(false);

  // the upstream's error message (an attempt's error line), and its recorded bodies with --bodies
  const failed = cli(["calls", "inspect", byModel("oc/fails"), "--bodies"]);
  expect(raw(failed.stdout + failed.stderr)).toEqual([]);
  expect(failed.stdout).toContain("\\u001b[2J\\u009b1mthing\\u007f\\r\\nfake line");
  expect(failed.stdout.split("\n").some((l) => l.startsWith("fake line"))).toBe(false);

  // --json is JSON: the strings come back whole
  const json = JSON.parse(cli(["calls", "inspect", byModel(ESCAPES), "--json"]).stdout);
  expect(json.requestedModel).toBe(ESCAPES);
  const usageJson = JSON.parse(cli(["usage", "--by", "model", "--json"]).stdout);
  expect(usageJson.rows.map((r: { group: string }) => r.group)).toContain(CRLF);
}, 150_000);
