/**
 * The process, /proc, statistics and table helpers shared by scripts/bench.ts and scripts/bench-floor.ts:
 * each server under test is its own process on 127.0.0.1 (port 0) so its CPU can be read from
 * /proc/PID/stat, and every table is printed the same way.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { SERVICE_ENV } from "../../src/cli/service.ts";

const ROOT = join(import.meta.dir, "..", "..");
/** µs per clock tick of /proc/PID/stat (USER_HZ = 100 on Linux). */
export const TICK_US = 1e6 / 100;

// ---- processes ----------------------------------------------------------------------------------

/** A server process under test: its name, the process, its pid and its base URL. */
export interface Proc {
  name: string;
  proc: Subprocess;
  pid: number;
  url: string;
}

/** The first line of a child's output that `match`es (its listening address), within `timeoutMs`. */
export async function readLine(stream: ReadableStream<Uint8Array>, match: (line: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const r = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => ({ done: true, value: undefined }))]);
      if (r.done) break;
      buf += dec.decode(r.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (match(line)) return line;
      }
    }
  } finally {
    reader.releaseLock();
  }
  throw new Error("process did not report its address in time");
}

/**
 * SIGTERM, then SIGKILL when the process has not exited 15 s later (said on stderr: a server whose
 * shutdown hangs must not hang the bench).
 */
export async function stopProc(p: Proc): Promise<void> {
  p.proc.kill();
  const late = await Promise.race([p.proc.exited.then(() => false), Bun.sleep(15_000).then(() => true)]);
  if (!late) return;
  process.stderr.write(`${p.name} (pid ${p.pid}) did not exit within 15 s of SIGTERM: killed\n`);
  p.proc.kill("SIGKILL");
  await p.proc.exited;
}

/** Keeps reading a pipe so the child never blocks on a full pipe buffer. */
export function drain(stream: ReadableStream<Uint8Array> | undefined | number | null) {
  if (stream && typeof stream === "object") void stream.pipeTo(new WritableStream()).catch(() => {});
}

/**
 * Starts `bun <script> ...args` (a server that prints `{"port":N}` on stdout once it listens on
 * 127.0.0.1) with `env` added to this process's environment.
 */
export async function startScript(name: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<Proc> {
  const proc = Bun.spawn(["bun", script, ...args], { stdout: "pipe", stderr: "inherit", env: { ...process.env, ...env } });
  const line = await readLine(proc.stdout as ReadableStream<Uint8Array>, (l) => l.startsWith("{"));
  drain(proc.stdout as ReadableStream<Uint8Array>);
  return { name, proc, pid: proc.pid, url: `http://127.0.0.1:${JSON.parse(line).port}` };
}

/** The bench upstream (scripts/bench-upstream.ts). */
export const startUpstream = () => startScript("upstream", join(ROOT, "scripts/bench-upstream.ts"));

/** The raw pipe (scripts/bench-pipe.ts) in front of `upstream`, with the service environment as switchyard gets it. */
export const startPipe = (upstream: string) => startScript("raw", join(ROOT, "scripts/bench-pipe.ts"), [], { UPSTREAM: upstream, ...SERVICE_ENV });

/** The bench config: one account per provider kind, every base URL the bench upstream. */
export function configYaml(upstream: string): string {
  return `server:
  host: 127.0.0.1
providers:
  - id: openai
    kind: openai
    base_url: "${upstream}/v1"
  - id: anthropic
    kind: anthropic
    base_url: "${upstream}"
  - id: cchat
    kind: openai-compatible
    base_url: "${upstream}/v1"
  - id: gemini
    kind: gemini
    base_url: "${upstream}"
accounts:
  - id: openai-bench
    provider: openai
    api_key: env:BENCH_UPSTREAM_KEY
  - id: anthropic-bench
    provider: anthropic
    api_key: env:BENCH_UPSTREAM_KEY
  - id: cchat-bench
    provider: cchat
    api_key: env:BENCH_UPSTREAM_KEY
  - id: gemini-bench
    provider: gemini
    api_key: env:BENCH_UPSTREAM_KEY
`;
}

/**
 * Starts switchyard as `cmd start …` with the service environment (SERVICE_ENV:
 * BUN_CONFIG_MAX_HTTP_REQUESTS=4096, MIMALLOC_PURGE_DELAY=1000, MIMALLOC_PURGE_HOLES_MIN_INTERVAL=1000, MIMALLOC_PURGE_HOLES=0) as scripts/start and the service unit
 * do; the raw pipe gets the same. Its request log (stdout) goes to /dev/null. `database`: a PostgreSQL URL
 * for the shared store (SPEC D-2) instead of SQLite in `dir`. `extraEnv`: variables of this server only
 * (scripts/bench-ab.ts's per-tree knock-out switches).
 */
export async function startSwitchyard(cmd: string[], upstream: string, dir: string, name = "switchyard", database?: string, extraEnv: Record<string, string> = {}): Promise<Proc> {
  const config = join(dir, "config.yaml");
  writeFileSync(config, configYaml(upstream));
  const env: Record<string, string | undefined> = { ...process.env, BENCH_UPSTREAM_KEY: "sk-bench-not-a-secret", SWITCHYARD_HOME: dir, ...SERVICE_ENV, ...extraEnv };
  const db = database ? ["--database", database] : [];
  const proc = Bun.spawn([...cmd, "start", "--config", config, "--host", "127.0.0.1", "--port", "0", "--data-dir", join(dir, "data"), ...db], {
    stdout: "ignore",
    stderr: "pipe",
    env,
  });
  const line = await readLine(proc.stderr as ReadableStream<Uint8Array>, (l) => l.includes('"switchyard listening"'), 60_000);
  drain(proc.stderr as ReadableStream<Uint8Array>);
  return { name, proc, pid: proc.pid, url: JSON.parse(line).url };
}

// ---- /proc ----------------------------------------------------------------------------------------

/** utime+stime of a process (all its threads), µs. */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}
/** Minor page faults of a process so far (all its threads; `minflt` of /proc/PID/stat). */
export function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
}
/** Resident set size, MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

// ---- statistics -----------------------------------------------------------------------------------

/** The `q` quantile of `xs` (nearest rank); NaN when empty. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = xs.slice().sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1));
  return s[i];
}
/** The median (the lower one of an even count). */
export const median = (xs: number[]) => quantile(xs, 0.5);
/** Median, min, max and count of a measurement's rounds (the JSON's shape). */
export const spread = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length });
/** `x` rounded to `d` decimals; null when not finite (JSON). */
export const round = (x: number, d = 3) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

// ---- tables ----------------------------------------------------------------------------------------

/** A Markdown table, numbers formatted by {@link fmt}, null as "-". */
export function table(head: string[], rows: (string | number | null)[][]): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? "-" : typeof c === "number" ? fmt(c) : c)))];
  const w = head.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => "| " + r.map((c, i) => String(c).padEnd(w[i])).join(" | ") + " |";
  return [line(cells[0] as string[]), "|" + w.map((x) => "-".repeat(x + 2)).join("|") + "|", ...cells.slice(1).map((r) => line(r as string[]))].join("\n");
}
/** A number with 3 significant-ish digits (thousands separated, "-" when not finite). */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return "-";
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString("en-US");
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}
/** a / b, NaN when either is missing or b is 0. */
export const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
