/**
 * The bundle macro: run by Bun when it transpiles src/dashboard/assets.ts, so the dashboard's built
 * files become string constants of the program. `bun build --compile` runs it once at build time (the
 * binary carries the files; no network, no disk at run time); `bun src/main.ts` runs it the first time
 * the dashboard is requested (~0.2 s). Bun.build cannot be called inside a macro, hence the child process.
 */
import { join } from "node:path";
import type { BuiltFile } from "./bundle.ts";

/** Builds the client in a child `bun` and returns its files. Throws with the build log on failure. */
export function dashboardFiles(): BuiltFile[] {
  const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "bundle.ts")], { stdout: "pipe", stderr: "pipe", env: { ...process.env, BUN_BE_BUN: "1" } });
  if (r.exitCode !== 0) throw new Error(`dashboard bundle failed:\n${r.stderr.toString()}`);
  return (JSON.parse(r.stdout.toString()) as { files: BuiltFile[] }).files;
}
