/**
 * A start that fails says so also as one JSON line on stderr, where the start's other lines (`switchyard
 * listening`, `stopped`) are JSON too (try22 P9: `switchyard failed to start: …`, `cannot listen: …` and a
 * config file's problems were plain text alone there): level error, msg "switchyard failed to start",
 * and in `error` the text people read, which follows it on stderr as it was.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimDataDir, releaseDataDir } from "../../src/instance-file.ts";
import { SOURCE_CLI } from "../support/instance.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `switchyard start … ARGS` on a scratch data directory: exit code, stderr's text for people (its lines that are not JSON), stderr's JSON lines parsed, and stdout. */
function start(args: string[], dataDir?: string) {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "switchyard-startfail-"));
  dirs.push(dir);
  const r = Bun.spawnSync([...SOURCE_CLI, "start", "--host", "127.0.0.1", "--data-dir", dir, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir }, timeout: 30_000 });
  const err = r.stderr.toString().trimEnd().split("\n");
  const json = err.filter((l) => l.startsWith("{"));
  return { code: r.exitCode, stderr: err.filter((l) => !l.startsWith("{")).join("\n"), lines: json.map((l) => JSON.parse(l) as Record<string, unknown>), stdout: r.stdout.toString(), dir };
}

test("a config file start cannot use: one JSON error line on stderr with the text stderr has", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-startfail-conf-"));
  const bad = join(dir, "config.yaml");
  writeFileSync(bad, "accounts:\n  - { id: a, provider: nope, api_key: env:UNSET_KEY_FOR_TEST }\n");
  const r = start(["--config", bad, "--port", "0"], dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toStartWith(`switchyard did not start: the config file ${bad} cannot be used (switchyard check-config ${bad} checks it again):\n  accounts[0].`);
  expect(r.lines).toHaveLength(1);
  expect(r.stdout).not.toContain("switchyard failed to start"); // said once, on stderr
  expect(r.lines[0]).toEqual({ level: "error", time: expect.any(Number), msg: "switchyard failed to start", error: r.stderr });
}, 40_000);

test("a port another program holds: one JSON error line on stderr with the cannot listen text", () => {
  const holder = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
  try {
    const r = start(["--port", String(holder.port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toEndWith("Stop the program that holds the port, or choose another with --port P (or server.port in the config file).");
    const last = r.stderr.split("\n").at(-1)!;
    expect(last).toStartWith("cannot listen: ");
    const failures = r.lines.filter((l) => l.level === "error");
    expect(failures).toEqual([{ level: "error", time: expect.any(Number), msg: "switchyard failed to start", error: last }]);
    expect(r.lines.at(-1)).toEqual(failures[0]!);
  } finally {
    holder.stop(true);
  }
}, 40_000);

test("a data directory another instance holds: one JSON error line on stderr with the refusal", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-startfail-held-"));
  claimDataDir(dir); // this test process stands for the running instance
  try {
    const r = start(["--port", "0"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(`switchyard failed to start: another switchyard instance (pid ${process.pid}, `);
    // the error without the msg again (until 2026-12-07: "error":"switchyard failed to start: another …")
    expect(r.lines).toEqual([{ level: "error", time: expect.any(Number), msg: "switchyard failed to start", error: r.stderr.replace("switchyard failed to start: ", "") }]);
    expect(r.lines[0]!.error).toStartWith("another switchyard instance (pid ");
  } finally {
    releaseDataDir(dir);
  }
}, 40_000);
