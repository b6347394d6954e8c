/**
 * A new user's first start (README "On a fresh machine"): `switchyard start` with no config file and no
 * API key in the environment. The log says that no account is configured and where a config file goes;
 * a request says how to add an account; a reload says why there is nothing to reload, and so does
 * SIGHUP, which leaves the process running; a file written at the default path afterwards is not taken
 * up (some of its settings are read only at start): reload and SIGHUP say it is there and to restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { SOURCE_CLI } from "../support/instance.ts";

let home: string;
let proc: Subprocess<"ignore", "pipe", "pipe">;
let url: string;
let adminToken: string;
const lines: string[] = [];

/** Why a file is not taken up while the instance runs (the start remark's and the 409's last words). */
const WHY = "switchyard reads and watches only the config file it started with, as some of a file's settings (server.host, server.port, server.database) take effect only at start";
/** The 409 and SIGHUP's sentence while no file is at the default path: what to do (write one, restart) and why. */
const noFile = () =>
  `This instance started on the built-in default configuration: there is no config file to reload. Write one at ${join(home, ".switchyard", "config.yaml")} (or pass --config FILE to start) and restart switchyard (switchyard stop, then switchyard start) to use it. ${WHY}.`;
/** The same once a file was written at the default path after the start. */
const written = () =>
  `This instance started on the built-in default configuration: ${join(home, ".switchyard", "config.yaml")} was written after it started and is not read until then; restart switchyard (switchyard stop, then switchyard start) to use it. ${WHY}.`;

/** Collects a stream's lines into {@link lines}. */
async function collect(stream: ReadableStream<Uint8Array>): Promise<void> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    const parts = buf.split("\n");
    buf = parts.pop()!;
    lines.push(...parts);
  }
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "switchyard-first-run-"));
  // Only PATH and HOME: no SWITCHYARD_HOME, no provider key, no config file.
  proc = Bun.spawn([...SOURCE_CLI, "start", "--port", "0"], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  void collect(proc.stdout);
  void collect(proc.stderr);
  // Until it listens or exits (the hook's timeout bounds the wait: starting from source on a loaded machine took over 15 s).
  while (!url) {
    const l = lines.map((x) => (x.startsWith("{") ? JSON.parse(x) : {})).find((j) => j.msg === "switchyard listening");
    if (l) url = l.url;
    else if (proc.exitCode !== null) throw new Error(`switchyard did not start:\n${lines.join("\n")}`);
    else await Bun.sleep(20);
  }
  adminToken = JSON.parse(readFileSync(join(home, ".switchyard", "instance.json"), "utf8")).adminToken;
});
afterAll(async () => {
  proc?.kill("SIGTERM");
  await proc?.exited;
  rmSync(home, { recursive: true, force: true });
});

describe("first start without a config file", () => {
  test("the log says no account is configured and where a config file goes", async () => {
    // stdout and stderr are separate pipes: the log lines may arrive after the "listening" line.
    const parsed = () => lines.flatMap((l) => (l.startsWith("{") ? [JSON.parse(l) as { level: string; msg: string; config?: string }] : []));
    for (let i = 0; i < 250 && !parsed().some((m) => m.msg.startsWith("no config file at")); i++) await Bun.sleep(20);
    const msgs = parsed();
    expect(msgs.find((m) => m.msg === "switchyard listening")!.config).toBe("(built-in default)");
    expect(msgs.some((m) => m.level === "warn" && m.msg.startsWith("no accounts are configured: requests will fail until one is added"))).toBe(true);
    expect(msgs).toContainEqual(
      expect.objectContaining({
        level: "info",
        msg: `no config file at ${join(home, ".switchyard", "config.yaml")}: running the built-in default; write one there (examples/config.yaml is a commented example) or pass --config FILE, and restart switchyard (switchyard stop, then switchyard start) to use it: ${WHY}`,
      }),
    );
  });

  test("a request for a built-in provider says how to give it an account", async () => {
    const res = await fetch(`${url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "anthropic/claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      "No account is configured for provider anthropic: add an account under `accounts:` in the config file (`provider: anthropic` with its `api_key`), or set ANTHROPIC_API_KEY before starting switchyard without a config file.",
    );
  });

  test("accounts status then lists the built-in provider the request went to, with how to give it an account (review17 R5: it said nothing)", async () => {
    const proc = Bun.spawn([...SOURCE_CLI, "accounts", "status"], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ err, code }).toEqual({ err: "", code: 0 });
    const lines = out.split("\n");
    const at = lines.indexOf(
      "provider anthropic (anthropic): no account, so its requests get 503 no_account: No account is configured for provider anthropic: add an account under `accounts:` in the config file (`provider: anthropic` with its `api_key`), or set ANTHROPIC_API_KEY before starting switchyard without a config file.",
    );
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^  built-in provider; 1 request refused for want of its account since this instance started, the last at \S+ \(503\)$/);
    // the built-in providers no request went to are not listed
    expect(lines.filter((l) => l.startsWith("provider "))).toHaveLength(1);
  });

  test("the dry run of a model guessed to a provider without accounts says how to add one, and exits 1 (no target can serve it)", async () => {
    const proc = Bun.spawn([...SOURCE_CLI, "route", "gpt-5-mini"], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(err).toBe("no target can serve gpt-5-mini (attempt order: none)\n");
    expect(code).toBe(1);
    expect(out).toContain(
      "1. openai/gpt-5-mini  out: no account is configured for openai: add an account under `accounts:` in the config file (`provider: openai` with its `api_key`), or set OPENAI_API_KEY before starting switchyard without a config file",
    );
    expect(out).toContain("attempt order: none");
  });

  test("POST /admin/api/config/reload says there is no file and how to use one", async () => {
    const res = await fetch(`${url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      noFile(),
    );
  });
  test("SIGHUP logs that there is no file to reload and the gateway keeps running (try19 D1: it died without a word, leaving instance.json)", async () => {
    proc.kill("SIGHUP");
    const said = () => lines.flatMap((l) => (l.startsWith("{") ? [JSON.parse(l) as { level: string; msg: string; error?: string }] : [])).find((m) => m.msg === "SIGHUP: nothing reloaded");
    for (const end = Date.now() + 15_000; !said() && proc.exitCode === null && Date.now() < end; ) await Bun.sleep(20);
    expect(said()).toMatchObject({
      level: "warn",
      msg: "SIGHUP: nothing reloaded",
      error: noFile(),
    });
    expect(proc.exitCode).toBeNull();
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(existsSync(join(home, ".switchyard", "instance.json"))).toBe(true);
  }, 30_000);

  test("a config file written at the default path after the start: reload, switchyard reload and SIGHUP say it is there and that a restart reads it, and the built-in default stays", async () => {
    const path = join(home, ".switchyard", "config.yaml");
    writeFileSync(path, "aliases:\n  fast: anthropic/claude-haiku-4-5\n");
    const res = await fetch(`${url}/admin/api/config/reload`, { method: "POST", headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(written());
    const cli = Bun.spawn([...SOURCE_CLI, "reload"], { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited]);
    expect({ out, code }).toEqual({ out: "", code: 1 });
    expect(err).toContain(written());
    const before = lines.length;
    proc.kill("SIGHUP");
    const said = () => lines.slice(before).flatMap((l) => (l.startsWith("{") ? [JSON.parse(l) as { level: string; msg: string; error?: string }] : [])).find((m) => m.msg === "SIGHUP: nothing reloaded");
    for (const end = Date.now() + 15_000; !said() && proc.exitCode === null && Date.now() < end; ) await Bun.sleep(20);
    expect(said()).toMatchObject({ level: "warn", msg: "SIGHUP: nothing reloaded", error: written() });
    expect(proc.exitCode).toBeNull();
    // still on the built-in default: the file's alias is not in force
    const settings = await fetch(`${url}/admin/api/settings`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(((await settings.json()) as { file: unknown }).file).toBeNull();
  }, 30_000);
});
