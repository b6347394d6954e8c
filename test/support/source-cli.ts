/**
 * The CLI from source, run to its end against an instance's data directory (the e2e tests of `keys`,
 * `calls` and the like: the CLI finds the running instance through the directory's instance.json).
 */
import { SOURCE_CLI } from "./instance.ts";

/** What one CLI run printed and how it exited. */
export interface CliOutput {
  /** The exit code. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Where and with what a {@link cliOn} run starts. */
export interface CliOnOptions {
  /** The child's HOME (default: the data directory). */
  home?: string;
  /** Its working directory (default: this process's). */
  cwd?: string;
  /** More environment variables; PATH and HOME are the only others it gets. */
  env?: Record<string, string>;
}

/** Runs `switchyard ARGS… --data-dir DATA_DIR` from source and waits for it to exit. */
export function cliOn(dataDir: string, args: string[], opts: CliOnOptions = {}): CliOutput {
  const r = Bun.spawnSync([...SOURCE_CLI, ...args, "--data-dir", dataDir], {
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: opts.home ?? dataDir, ...opts.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
