/** Version and build info (`switchyard version`). */
import pkg from "../package.json" with { type: "json" };

/** The switchyard version (package.json `version`), as `switchyard version` and the instance file report it. */
export const VERSION: string = pkg.version;

// Set by `scripts/build` through `bun build --define`; absent when running from source.
declare const SWITCHYARD_BUILD_COMMIT: string | undefined;
declare const SWITCHYARD_BUILD_DATE: string | undefined;

/**
 * Where this code came from: the git commit (short hash, with `-dirty` when the tree had uncommitted
 * changes) and the UTC time (ISO 8601) `scripts/build` compiled it, so two builds of one version can be
 * told apart after an upgrade (SPEC 2.2 "version and build info"). From source the commit is read from
 * the checkout with `git` (undefined outside one) and there is no build date.
 */
export function buildSource(): { commit?: string; builtAt?: string } {
  return (source ??= readBuildSource());
}

let source: { commit?: string; builtAt?: string } | undefined;

function readBuildSource(): { commit?: string; builtAt?: string } {
  if (typeof SWITCHYARD_BUILD_COMMIT === "string") {
    return { commit: SWITCHYARD_BUILD_COMMIT, ...(typeof SWITCHYARD_BUILD_DATE === "string" ? { builtAt: SWITCHYARD_BUILD_DATE } : {}) };
  }
  return checkoutCommit(import.meta.dir) ?? {};
}

/**
 * The checkout's commit at `dir` (short hash, `-dirty` with uncommitted changes to tracked files), or
 * undefined outside a checkout or without git. Read-only: `git describe --dirty` refreshes and rewrites
 * the index under `.git/index.lock`, which could make a user's own `git commit` in the same checkout fail
 * while the gateway starts (review14 R2); `rev-parse` and `status --no-optional-locks` write nothing.
 * `scripts/build` (which calls this) and the tests name a build's commit with it.
 */
export function checkoutCommit(dir: string): { commit: string } | undefined {
  try {
    const head = Bun.spawnSync(["git", "rev-parse", "--short=7", "HEAD"], { cwd: dir, stdout: "pipe", stderr: "ignore" });
    const hash = head.exitCode === 0 ? head.stdout.toString().trim() : "";
    if (!hash) return undefined;
    const status = Bun.spawnSync(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], { cwd: dir, stdout: "pipe", stderr: "ignore" });
    return { commit: status.exitCode === 0 && status.stdout.toString().trim() !== "" ? `${hash}-dirty` : hash };
  } catch {
    return undefined; // no git on this machine
  }
}

/** Build details: version, Bun version, platform. */
export function buildInfo(): { version: string; bun: string; platform: string; arch: string } {
  return { version: VERSION, bun: Bun.version, platform: process.platform, arch: process.arch };
}
