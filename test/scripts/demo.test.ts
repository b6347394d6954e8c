/**
 * scripts/demo as a new operator meets it (README: "No provider account at hand?"): what it prints
 * works as printed. The dashboard's address answers with the dashboard, the printed requests are
 * served, and the printed CLI commands reach this instance (its data directory is a temporary one, so
 * `switchyard setup` without `--data-dir` would find no instance in ~/.switchyard); `switchyard stop
 * --data-dir` stops it as it stops `switchyard start`'s gateway (src/stop-signals.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/instance.ts";

let demo: ReturnType<typeof Bun.spawn>;
let printed = "";
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "switchyard-demo-home-"));
  demo = Bun.spawn([process.execPath, join(ROOT, "scripts/demo.ts")], { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "ignore", stderr: "pipe" });
  const reader = (demo.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  while (!printed.includes("Ctrl-C stops both.")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`scripts/demo ended before it was ready:\n${printed}`);
    printed += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
}, 60_000);

afterAll(async () => {
  demo?.kill("SIGTERM");
  await demo?.exited;
  rmSync(home, { recursive: true, force: true });
  // the demo's own temporary data directory (config, database), named in what it printed
  const dataDir = /--data-dir (\S+)/.exec(printed)?.[1];
  if (dataDir?.startsWith(tmpdir())) rmSync(dataDir, { recursive: true, force: true });
});

/** The printed line that starts (after its indent) with `start`. */
const line = (start: string) => printed.split("\n").map((l) => l.trim()).find((l) => l.startsWith(start));

/** Runs a printed `bun src/main.ts …` command as the shell would (words split on spaces), in the checkout. */
function run(command: string) {
  const [bun, ...args] = command.split(" ");
  expect(bun).toBe("bun");
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test("it prints the dashboard's address, and the dashboard answers there", async () => {
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)![1]!;
  expect(line("Dashboard:")).toBe(`Dashboard: ${url}/dashboard`);
  const res = await fetch(`${url}/dashboard`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(await res.text()).toContain("switchyard");
}, 30_000);

test("the printed request is served, and the printed calls list and setup commands reach this instance", async () => {
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)![1]!;
  const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "demo", messages: [{ role: "user", content: "hi" }] }) });
  expect(res.status).toBe(200);
  expect(((await res.json()) as any).choices[0].message.content).toBe("Hello from the switchyard demo upstream.");

  const calls = run(line("bun src/main.ts calls list")!);
  expect(calls.stderr).toBe("");
  expect(calls.stdout).toContain("demo-anthropic/claude-demo");

  const setup = line("bun src/main.ts setup claude-code")!;
  expect(setup).toEndWith("--dry-run");
  const r = run(setup);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(r.stdout).toContain(`"ANTHROPIC_BASE_URL": "${url}"`);
  expect(r.stdout).toContain('"ANTHROPIC_MODEL": "demo"');
  expect(r.stdout.trim().split("\n").at(-1)).toBe("dry run: nothing was written");
}, 60_000);

test("the demo's models are priced (invented demo prices): the served request has a cost, not 'unpriced'", async () => {
  const dataDir = /--data-dir (\S+)/.exec(printed)![1]!;
  // the printed request (combo demo → demo-anthropic/claude-demo) was served above: 11 input tokens at $3, 7 output at $15 a million
  let usage = run(`bun src/main.ts usage --data-dir ${dataDir}`);
  for (let i = 0; i < 50 && !usage.stdout.includes("demo-anthropic/claude-demo"); i++) {
    await Bun.sleep(100);
    usage = run(`bun src/main.ts usage --data-dir ${dataDir}`);
  }
  expect(usage.stderr).toBe("");
  const row = usage.stdout.split("\n").find((l) => l.startsWith("demo-anthropic/claude-demo"));
  expect(row?.trim().split(/\s+/).at(-1)).toBe("$0.00014");
  expect(usage.stdout).not.toContain("unpriced");
}, 30_000);

test("switchyard stop --data-dir stops it as it stops `start`'s gateway: exit code 0 from last-exit.json, the 'shutting down' and 'stopped' lines", async () => {
  const dataDir = /--data-dir (\S+)/.exec(printed)![1]!;
  const fakeUrl = /fake upstream (http:\/\/127\.0\.0\.1:\d+)/.exec(printed)![1]!;
  const stopped = run(`bun src/main.ts stop --data-dir ${dataDir}`);
  expect({ code: stopped.code, stderr: stopped.stderr }).toEqual({ code: 0, stderr: "" });
  // it named "its exit code is not known: it left no …/last-exit.json" before: the demo's stop skipped start's exit path
  expect(stopped.stdout.trim()).toMatch(new RegExp(`^stopped switchyard \\(pid ${demo.pid}, .*\\) in \\d+\\.\\d s \\(exit code 0\\)$`));
  expect(await demo.exited).toBe(0);
  let rest = "";
  const reader = (demo.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value, { stream: true });
  const lines = rest.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { msg: string; signal?: string; exitCode?: number });
  expect(lines.find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM" });
  expect(lines.at(-1)?.msg).toStartWith("stopped: exit 0 after ");
  expect(lines.at(-1)?.exitCode).toBe(0);
  // and the fake upstream stopped with it
  expect(await fetch(fakeUrl).then(() => "answered", () => "refused")).toBe("refused");
}, 60_000);
