/**
 * The CLI's own errors (import, start, check-config, a usage error) quote paths, file contents and
 * config values: none of them reaches the terminal raw (README "Security"). A file name or a value
 * holding an OSC 8 hyperlink, a CR or a line break is shown escaped (`\u001b]8;;`, `\r`, `\n`), so it
 * can neither drive the terminal nor print a line that reads as the CLI's own ("imported … as account
 * …"); the CLI's own multi-line errors (a usage text, one config problem a line) keep their lines.
 * The real CLI, spawned; no instance is needed (each error comes before one is asked).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SOURCE_CLI } from "../support/instance.ts";

const dir = mkdtempSync(join(tmpdir(), "sy-local-errors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A line that reads as the CLI's own success line, after a line break in a name or value. */
const FORGED = "imported /tmp/other.json as account evil (provider claude-code) added";
/** An OSC 8 hyperlink opener, a CR and a line break followed by {@link FORGED}. */
const HOSTILE = `x\u001b]8;;https:evil.example\u0007\r\n${FORGED}`;

function cli(args: string[]) {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** Every control character but the line breaks that end lines (C0, DEL, C1) as hex: lines are counted apart. */
const raw = (s: string) => [...s].filter((c) => /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(c)).map((c) => c.codePointAt(0)!.toString(16));

test("import: a --from path holding an OSC 8 link, CR and LF is one escaped line, not a second line of the CLI's", () => {
  const r = cli(["import", "claude-code", "--from", join(dir, HOSTILE), "--data-dir", join(dir, "data")]);
  expect(r.code).toBe(1);
  expect(raw(r.stderr)).toEqual([]);
  expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  expect(r.stderr).toContain(`cannot import: ${join(dir, "x")}\\u001b]8;;https:evil.example\\u0007\\r\\n${FORGED} does not exist`);
});

test("import: a credential file whose value holds them is quoted escaped on one line", () => {
  const file = join(dir, "credentials.json");
  writeFileSync(file, JSON.stringify({ claudeAiOauth: { accessToken: "a", expiresAt: HOSTILE } }));
  const r = cli(["import", "claude-code", "--from", file, "--data-dir", join(dir, "data")]);
  expect(r.code).toBe(1);
  expect(raw(r.stderr)).toEqual([]);
  expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  expect(r.stderr).toContain(`claudeAiOauth.expiresAt: Invalid type: Expected number but received "x\\u001b]8;;https:evil.example\\u0007\\r\\n${FORGED}"`);
});

test("start and check-config: a config path holding them is escaped in each line; the problem list keeps its lines", () => {
  const path = join(dir, HOSTILE);
  const start = cli(["start", "--config", path, "--port", "0", "--data-dir", join(dir, "data")]);
  expect(start.code).toBe(1);
  const lines = start.stderr.split("\n").filter(Boolean);
  // the JSON line for a collector, then the text for people: a head and one line per problem
  expect(JSON.parse(lines[0]).msg).toBe("switchyard failed to start");
  expect(lines.slice(1).map((l) => l.slice(0, 40))).toEqual([`switchyard did not start: the config fil`, `  cannot read config file ${path.slice(0, 14)}`]);
  expect(raw(lines.slice(1).join("\n"))).toEqual([]);
  expect(lines[2]).toContain(`\\u0007\\r\\n${FORGED}: not found`);

  const check = cli(["check-config", path]);
  expect(check.code).toBe(1);
  expect(raw(check.stdout)).toEqual([]);
  expect(check.stdout.split("\n").filter(Boolean)).toHaveLength(1);
  expect(check.stdout).toContain(`\\u0007\\r\\n${FORGED}: cannot read config file`);
});

test("a usage error keeps its own lines, the word the user typed escaped", () => {
  const r = cli([`frob\r\n${FORGED}`]);
  expect(r.code).toBe(2);
  expect(raw(r.stderr)).toEqual([]);
  const lines = r.stderr.split("\n");
  expect(lines.slice(0, 3)).toEqual([`unknown command: frob\\r\\n${FORGED}`, "", "switchyard — a local-first LLM gateway"]);
  expect(lines.some((l) => l.startsWith("  switchyard start [--config FILE]"))).toBe(true); // the usage text, a line per command
});
