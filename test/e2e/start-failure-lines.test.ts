/**
 * A start that fails says so also as one JSON line of the log on stdout (try22 P9: `switchyard failed to
 * start: …`, `cannot listen: …` and a config file's problems were plain text on stderr alone, amid JSON
 * log lines): level error, msg "switchyard failed to start", and in `error` the text people read on
 * stderr, which stays as it was.
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

/** Runs `switchyard start … ARGS` on a scratch data directory: exit code, stderr's text, stdout's lines parsed as JSON (a line that is not JSON fails the test). */
function start(args: string[], dataDir?: string) {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), "switchyard-startfail-"));
  dirs.push(dir);
  const r = Bun.spawnSync([...SOURCE_CLI, "start", "--host", "127.0.0.1", "--data-dir", dir, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir }, timeout: 30_000 });
  const stdout = r.stdout.toString().split("\n").filter((l) => l !== "");
  return { code: r.exitCode, stderr: r.stderr.toString().trimEnd(), lines: stdout.map((l) => JSON.parse(l) as Record<string, unknown>), dir };
}

test("a config file start cannot use: one error line on stdout with the text stderr has", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-startfail-conf-"));
  const bad = join(dir, "config.yaml");
  writeFileSync(bad, "accounts:\n  - { id: a, provider: nope, api_key: env:UNSET_KEY_FOR_TEST }\n");
  const r = start(["--config", bad, "--port", "0"], dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toStartWith(`switchyard did not start: the config file ${bad} cannot be used (switchyard check-config ${bad} checks it again):\n  accounts[0].`);
  expect(r.lines).toHaveLength(1);
  expect(r.lines[0]).toEqual({ level: "error", time: expect.any(Number), msg: "switchyard failed to start", error: r.stderr });
}, 40_000);

test("a port another program holds: one error line on stdout with the cannot listen text", () => {
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

test("a data directory another instance holds: one error line on stdout with the refusal", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-startfail-held-"));
  claimDataDir(dir); // this test process stands for the running instance
  try {
    const r = start(["--port", "0"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(`switchyard failed to start: another switchyard instance (pid ${process.pid}, `);
    expect(r.lines).toEqual([{ level: "error", time: expect.any(Number), msg: "switchyard failed to start", error: r.stderr }]);
  } finally {
    releaseDataDir(dir);
  }
}, 40_000);
