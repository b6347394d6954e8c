#!/usr/bin/env bun
/**
 * Idle RSS of switchyard before and after traffic (issue 17: the compiled binary ≤ 60 MB idle after
 * 1,000 requests), and its CPU per request while serving them, so that a memory change can be checked
 * to be CPU-neutral. Starts the bench upstream in this process (scripts/bench-upstream.ts), switchyard
 * as a child (`bun src/main.ts` or a compiled binary) with the bench's config, waits 1.5 s and reads
 * `VmRSS`, sends `--requests` requests (one at a time, rotating over the lanes chat→chat,
 * messages→messages, messages→chat and responses→chat, JSON and stream alternating), waits 1.5 s idle
 * and reads it again. `--runs N` repeats the whole start-to-idle cycle (fresh process and data dir each
 * time) and prints each run; `--compare` does it for two commands interleaved (A/B back to back).
 *
 * Usage: bun scripts/bench-memory.ts [--binary PATH | --build] [--requests 1000] [--runs 3]
 *          [--compare PATH_B] [--smol]
 *   --build        bun build --compile src/main.ts into a scratch file and measure that
 *   --binary PATH  a compiled binary; default: bun src/main.ts (from source)
 *   --compare B    a second binary measured in the same runs, interleaved with the first
 *   --smol         run the command with Bun's --smol (for a binary: BUN_OPTIONS=--smol)
 *   --pause MS     pause MS ms after every 50 requests (bursts with idle gaps, as an agent's traffic
 *                  comes): the CPU per request then includes whatever the gateway does when idle
 *   --idle MS[,MS…] how long after the last request the idle readings are taken, ms (default 1500; a list
 *                  such as 33000,120000 reads at each: the idle trim runs 30 s after the last request,
 *                  and what it gave back of the executable's pages comes back as idle timers run code)
 *   --maps         also print, at both idle points, RSS by kind (anonymous, file-backed) and the largest
 *                  mappings of /proc/PID/smaps (where the resident memory is: heap, JIT code, the binary)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBenchUpstream } from "./bench-upstream.ts";
import { SERVICE_ENV } from "../src/cli/service.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const REQUESTS = Number(opt("--requests") ?? 1000);
const RUNS = Number(opt("--runs") ?? 1);
const SMOL = argv.includes("--smol");
const TICK_US = 10_000;
const MAPS = argv.includes("--maps");
const PAUSE_MS = Number(opt("--pause") ?? 0);
const IDLE_MS = (opt("--idle") ?? "1500").split(",").map(Number).sort((x, y) => x - y);

/** RSS by kind and the largest resident mappings of a process, as text (from /proc/PID/status and smaps). */
function mapsReport(pid: number, top = 8): string {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  const maps: Array<{ name: string; rss: number }> = [];
  let cur: { name: string; rss: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = { name: head[1] || "[anonymous]", rss: 0 };
      maps.push(cur);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && cur) cur.rss += Number(rss[1]) / 1024;
  }
  const byName = new Map<string, { n: number; rss: number }>();
  for (const m of maps) {
    const e = byName.get(m.name) ?? { n: 0, rss: 0 };
    e.n++;
    e.rss += m.rss;
    byName.set(m.name, e);
  }
  const largest = maps.filter((m) => m.name === "[anonymous]").sort((a, b) => b.rss - a.rss).slice(0, top);
  return [
    `    RssAnon ${kb("RssAnon").toFixed(1)} MB, RssFile ${kb("RssFile").toFixed(1)} MB, RssShmem ${kb("RssShmem").toFixed(1)} MB`,
    ...[...byName].sort((a, b) => b[1].rss - a[1].rss).slice(0, top).map(([name, e]) => `    ${e.rss.toFixed(1).padStart(6)} MB  ${name} (${e.n} mappings)`),
    `    largest anonymous mappings: ${largest.map((m) => m.rss.toFixed(1)).join(", ")} MB`,
  ].join("\n");
}

const SYSTEM = "You are a careful coding assistant. Answer briefly and precisely. ".repeat(25);
const USER = "Summarise the change in one sentence.";
const LANES = [
  { path: "/v1/chat/completions", body: (stream: boolean) => ({ model: "gpt-bench", stream, messages: [{ role: "system", content: SYSTEM }, { role: "user", content: USER }], max_tokens: 256 }) },
  { path: "/v1/messages", body: (stream: boolean) => ({ model: "claude-bench", stream, max_tokens: 256, system: SYSTEM, messages: [{ role: "user", content: USER }] }) },
  { path: "/v1/messages", body: (stream: boolean) => ({ model: "gpt-bench", stream, max_tokens: 256, system: SYSTEM, messages: [{ role: "user", content: USER }] }) },
  { path: "/v1/responses", body: (stream: boolean) => ({ model: "cchat/gpt-bench", stream, instructions: SYSTEM, input: USER, max_output_tokens: 256 }) },
];

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}
/** RSS with its anonymous and file-backed parts, as text: "73.1 MB (22.9 anon + 50.2 file)". */
function rssSplit(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (k: string) => (Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024).toFixed(1);
  return `${mb("VmRSS")} MB (${mb("RssAnon")} anon + ${mb("RssFile")} file)`;
}
function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

/** One cycle: start, idle RSS, `REQUESTS` requests, idle RSS; the process is stopped at the end. */
async function cycle(cmd: string[], upstream: string): Promise<{ startMb: number; afterMb: string[]; cpuUsPerRequest: number }> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-memory-"));
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `providers:\n  - { id: openai, kind: openai, base_url: "${upstream}/v1" }\n  - { id: anthropic, kind: anthropic, base_url: "${upstream}" }\n  - { id: cchat, kind: openai-compatible, base_url: "${upstream}/v1" }\naccounts:\n  - { id: openai-bench, provider: openai, api_key: env:BENCH_UPSTREAM_KEY }\n  - { id: anthropic-bench, provider: anthropic, api_key: env:BENCH_UPSTREAM_KEY }\n  - { id: cchat-bench, provider: cchat, api_key: env:BENCH_UPSTREAM_KEY }\n`,
  );
  // The launchers' environment (scripts/start, the service unit); the caller's own values win.
  const env: Record<string, string | undefined> = { ...SERVICE_ENV, ...process.env, BENCH_UPSTREAM_KEY: "sk-bench-not-a-secret", SWITCHYARD_HOME: dir };
  if (SMOL && cmd[0] !== process.execPath) env.BUN_OPTIONS = "--smol";
  const full = SMOL && cmd[0] === process.execPath ? [cmd[0]!, "--smol", ...cmd.slice(1)] : cmd;
  const proc = Bun.spawn([...full, "start", "--config", config, "--host", "127.0.0.1", "--port", "0", "--data-dir", join(dir, "data")], { stdout: "ignore", stderr: "pipe", env });
  try {
    const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
    let buf = "";
    let url: string | undefined;
    while (!url) {
      const r = await reader.read();
      if (r.done) throw new Error(`switchyard exited before listening: ${buf.slice(-500)}`);
      buf += new TextDecoder().decode(r.value);
      const line = buf.split("\n").find((l) => l.includes('"switchyard listening"'));
      if (line) url = JSON.parse(line).url;
    }
    void (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
    })();
    await Bun.sleep(1500);
    const startMb = rssMb(proc.pid);
    if (MAPS) console.log(`  after start:\n${mapsReport(proc.pid)}`);
    const c0 = cpuUs(proc.pid);
    for (let i = 0; i < REQUESTS; i++) {
      if (PAUSE_MS > 0 && i > 0 && i % 50 === 0) await Bun.sleep(PAUSE_MS);
      const lane = LANES[i % LANES.length]!;
      const res = await fetch(url + lane.path, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(lane.body(Math.floor(i / LANES.length) % 2 === 1)) });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`request ${i} to ${lane.path} answered ${res.status}`);
    }
    const cpu = cpuUs(proc.pid) - c0;
    const last = performance.now();
    const afterMb: string[] = [];
    for (const ms of IDLE_MS) {
      await Bun.sleep(Math.max(0, ms - (performance.now() - last)));
      afterMb.push(rssSplit(proc.pid));
      if (MAPS) console.log(`  ${ms / 1000} s after ${REQUESTS} requests:\n${mapsReport(proc.pid)}`);
    }
    return { startMb, afterMb, cpuUsPerRequest: cpu / REQUESTS };
  } finally {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  let scratch: string | undefined;
  let a: string[];
  if (argv.includes("--build")) {
    scratch = mkdtempSync(join(tmpdir(), "switchyard-bench-memory-bin-"));
    const out = join(scratch, "switchyard");
    const b = Bun.spawnSync(["bun", "build", "--compile", join(ROOT, "src/main.ts"), "--outfile", out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (b.exitCode !== 0) throw new Error(`bun build --compile failed: ${b.stderr.toString().slice(0, 500)}`);
    a = [out];
  } else a = opt("--binary") ? [opt("--binary")!] : [process.execPath, join(ROOT, "src/main.ts")];
  const b = opt("--compare") ? [opt("--compare")!] : undefined;
  const upstream = startBenchUpstream(0);
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  console.log(`${REQUESTS} requests per run${PAUSE_MS ? ` (a ${PAUSE_MS} ms pause after every 50)` : ""}, idle RSS 1.5 s after start and ${IDLE_MS.map((ms) => ms / 1000).join(" / ")} s after the last request${SMOL ? ", --smol" : ""}`);
  try {
    for (let r = 0; r < RUNS; r++) {
      for (const [name, cmd] of b ? ([["A", a], ["B", b]] as const) : ([["", a]] as const)) {
        const m = await cycle([...cmd], upstreamUrl);
        console.log(`${name ? name + " " : ""}run ${r + 1}: idle ${m.startMb.toFixed(1)} MB, idle ${IDLE_MS.map((ms) => ms / 1000).join(" / ")} s after ${REQUESTS} requests ${m.afterMb.join(" / ")}, ${m.cpuUsPerRequest.toFixed(0)} µs CPU per request`);
      }
    }
  } finally {
    upstream.stop(true);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
