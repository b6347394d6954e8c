/**
 * Runs `switchyard start` as a real child process (source through `bun src/main.ts`, or the compiled
 * binary) for the lifecycle, secrets, CLI, reload and binary e2e tests: port 0 on 127.0.0.1, a scratch
 * data directory, every stdout/stderr line captured, the URL read from the "listening" log line.
 */
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The repository root. */
export const ROOT = resolve(import.meta.dir, "../..");

/** argv prefix that runs the CLI from source. */
export const SOURCE_CLI = [process.execPath, join(ROOT, "src/main.ts")];

export interface Instance {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** From the "switchyard listening" line, e.g. http://127.0.0.1:43121 */
  url: string;
  dataDir: string;
  configPath: string;
  /** Lines written so far (the arrays keep growing while the process runs). */
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code once the process has exited and its output is fully read. */
  exited: Promise<number>;
  /** Sends a signal (default SIGTERM). */
  kill(signal?: NodeJS.Signals): void;
  /** instance.json as written by the running instance. */
  instance(): { url: string; pid: number; adminToken: string; ephemeralPort?: boolean };
}

export interface StartOptions {
  /** Config YAML (written to DATA/config.yaml). */
  yaml: string;
  /** Environment added to a minimal one (PATH, HOME pointing at the data dir). */
  env?: Record<string, string>;
  /** argv prefix instead of `bun src/main.ts` (the compiled binary). */
  cli?: string[];
  /** Working directory (default: the data directory, so nothing from the repo is on hand). */
  cwd?: string;
  dataDir?: string;
  /** Extra `start` arguments. */
  args?: string[];
  /**
   * Gives up (SIGKILL, throws) when the instance does not listen within this many ms. Default: no limit
   * of its own (the test's timeout bounds the wait): starting from source is seconds of CPU, and a
   * loaded machine took more than 15 s.
   */
  timeoutMs?: number;
}

/** Instances started and not yet exited: killed when the test process exits (a test that timed out). */
const live = new Set<Subprocess>();
let exitHook = false;

/** Reads a stream line by line into `into` until it ends. */
async function collect(stream: ReadableStream<Uint8Array>, into: string[]): Promise<void> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      into.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
  if (buf) into.push(buf);
}

/** Starts `switchyard start --config … --port 0 --data-dir …` and waits until it listens. */
export async function startInstance(opts: StartOptions): Promise<Instance> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "switchyard-proc-"));
  mkdirSync(dataDir, { recursive: true });
  const configPath = join(dataDir, "config.yaml");
  writeFileSync(configPath, opts.yaml);
  const argv = [...(opts.cli ?? SOURCE_CLI), "start", "--config", configPath, "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir, ...(opts.args ?? [])];
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd ?? dataDir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const reading = Promise.all([collect(proc.stdout, stdout), collect(proc.stderr, stderr)]);
  const exited = Promise.all([proc.exited, reading]).then(([code]) => code);
  live.add(proc);
  void proc.exited.finally(() => live.delete(proc));
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const p of live) p.kill("SIGKILL");
    });
  }
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  let url: string | undefined;
  while (!url) {
    for (const l of [...stderr, ...stdout]) {
      try {
        const j = JSON.parse(l);
        if (j.msg === "switchyard listening" && typeof j.url === "string") url = j.url;
      } catch {
        // not a JSON line
      }
    }
    if (url) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      await exited.catch(() => {});
      throw new Error(`switchyard did not start (exit ${proc.exitCode}):\n${[...stdout, ...stderr].join("\n")}`);
    }
    await Bun.sleep(20);
  }
  return {
    proc,
    url,
    dataDir,
    configPath,
    stdout,
    stderr,
    exited,
    kill: (signal = "SIGTERM") => proc.kill(signal),
    instance: () => JSON.parse(readFileSync(join(dataDir, "instance.json"), "utf8")),
  };
}

/** Stops an instance that may still run: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopInstance(inst: Instance | undefined, graceMs = 5000): Promise<void> {
  if (!inst || inst.proc.exitCode !== null || inst.proc.signalCode !== null) return;
  inst.kill("SIGTERM");
  const t = setTimeout(() => inst.kill("SIGKILL"), graceMs);
  await inst.exited.catch(() => {});
  clearTimeout(t);
}

/** Whether instance.json exists in a data directory. */
export const hasInstanceFile = (dataDir: string) => existsSync(join(dataDir, "instance.json"));
