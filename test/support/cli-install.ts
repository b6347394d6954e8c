/**
 * Installs the real coding-agent CLIs (Claude Code, Codex, Gemini CLI) for the CLI e2e tests into an ignored cache
 * folder (`.cache/e2e-clis/<name>@<version>/` under the repo, or `$SWITCHYARD_E2E_CLI_CACHE`), with
 * `npm install --prefix`. A cache whose installed version matches and whose binary answers `--version`
 * is reused. Installing is part of the test run (a fresh CI machine has node, npm and the npm registry);
 * when it fails, `ensureCli` throws an error that says what to do — the tests fail, they never skip.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runCli, tail } from "./cli-run.ts";

export interface CliSpec {
  /** Short name, used for the cache folder. */
  name: string;
  /** npm package. */
  pkg: string;
  /** Exact version (pinned). */
  version: string;
  /** The package's bin name (node_modules/.bin/<bin>). */
  bin: string;
}

/** Claude Code: 2.1.332 is the exact pin that runs on the machine's node 20. */
export const CLAUDE_CODE: CliSpec = { name: "claude-code", pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" };
/** Codex CLI: the version the client fixtures were captured with. */
export const CODEX: CliSpec = { name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex" };

/** Gemini CLI: the newest release when the Gemini client endpoints were built (node >= 20). */
export const GEMINI_CLI: CliSpec = { name: "gemini-cli", pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" };

export const REPO_ROOT = resolve(import.meta.dir, "../..");
export const CLI_CACHE = process.env.SWITCHYARD_E2E_CLI_CACHE ?? join(REPO_ROOT, ".cache", "e2e-clis");

/** How long one `npm install` may take (the two packages are ~400 MB each with their native binaries). */
const INSTALL_TIMEOUT_MS = 8 * 60_000;

/** Timeout for a `beforeAll` that installs a CLI. */
export const INSTALL_HOOK_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 60_000;

function installDir(spec: CliSpec): string {
  return join(CLI_CACHE, `${spec.name}@${spec.version}`);
}

function binPath(dir: string, spec: CliSpec): string {
  return join(dir, "node_modules", ".bin", spec.bin);
}

function installedVersion(dir: string, spec: CliSpec): string | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "node_modules", spec.pkg, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/** Runs `<bin> --version` with a scratch HOME; returns undefined when it printed the expected version. */
async function versionProblem(bin: string, spec: CliSpec): Promise<string | undefined> {
  if (!existsSync(bin)) return `${bin} does not exist`;
  const home = mkdtempSync(join(tmpdir(), `sy-e2e-version-`));
  try {
    const run = await runCli([bin, "--version"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: join(home, ".codex"), DISABLE_AUTOUPDATER: "1" },
      timeoutMs: 60_000,
    });
    if (run.code === 0 && run.stdout.includes(spec.version)) return undefined;
    return `\`${bin} --version\` exited ${run.code}${run.timedOut ? " (timed out)" : ""}; stdout: ${tail(run.stdout, 500)}; stderr: ${tail(run.stderr, 1500)}`;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const ensured = new Map<string, Promise<string>>();

/**
 * Returns the absolute path of the CLI's binary, installing `pkg@version` into the cache first unless
 * that exact version is already there and runs. Throws a descriptive error when the install fails.
 * Test files share one process: the check (or install) runs once per CLI and run.
 */
export function ensureCli(spec: CliSpec): Promise<string> {
  const key = `${spec.pkg}@${spec.version}`;
  let p = ensured.get(key);
  if (!p) {
    p = ensureCliOnce(spec);
    // A failed install is remembered too: every file that asks fails at once with the same message.
    ensured.set(key, p);
  }
  return p;
}

async function ensureCliOnce(spec: CliSpec): Promise<string> {
  const dir = installDir(spec);
  const bin = binPath(dir, spec);
  if (installedVersion(dir, spec) === spec.version && (await versionProblem(bin, spec)) === undefined) return bin;

  mkdirSync(CLI_CACHE, { recursive: true });
  // Install into a staging folder, then move it into place, so an interrupted install never looks cached.
  const staging = mkdtempSync(join(CLI_CACHE, `.staging-${spec.name}-`));
  const started = Date.now();
  const run = await runCli(
    [
      "npm", "install", "--prefix", staging, "--no-audit", "--no-fund", "--no-save",
      // Claude Code's postinstall puts its native binary in place, and the binary comes as an optional dependency.
      "--ignore-scripts=false", "--include=optional",
      `${spec.pkg}@${spec.version}`,
    ],
    {
      cwd: staging,
      env: { ...process.env, npm_config_update_notifier: "false" } as Record<string, string>,
      timeoutMs: INSTALL_TIMEOUT_MS,
    },
  );
  if (run.code !== 0 || installedVersion(staging, spec) !== spec.version) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(
      `CLI e2e: could not install ${spec.pkg}@${spec.version} into ${dir} ` +
        `(npm exited ${run.code}${run.timedOut ? `, killed after ${INSTALL_TIMEOUT_MS / 1000}s` : ""}, ${Date.now() - started} ms). ` +
        `These tests need node, npm and the npm registry; they do not skip without them.\n` +
        `npm stderr:\n${tail(run.stderr, 4000)}\nnpm stdout:\n${tail(run.stdout, 1000)}`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (e) {
    // Another process installed the same version concurrently: use theirs.
    rmSync(staging, { recursive: true, force: true });
    if (installedVersion(dir, spec) !== spec.version) throw e;
  }
  const problem = await versionProblem(bin, spec);
  if (problem) {
    throw new Error(`CLI e2e: installed ${spec.pkg}@${spec.version} into ${dir}, but it does not run: ${problem}`);
  }
  return bin;
}
