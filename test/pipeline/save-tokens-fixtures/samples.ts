/**
 * Tool outputs for the token-saver tests. The `.txt` files next to this module are real command
 * output captured in this repository (`git show ad0b1bc --format=`, `git status` in a clone with staged,
 * unstaged, renamed, deleted and untracked files, `rg -n`, `rg -n -C1`, `ls -la` of node_modules,
 * `tree formats test/formats`, `tree node_modules/effect -L 2`). The functions build longer outputs
 * deterministically (a server log with 1,000 repeated lines, a big `git status`, source code).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A captured output by file name (e.g. `git-diff.txt`). */
export function sample(name: string): string {
  return readFileSync(join(import.meta.dir, name), "utf8");
}

/** A server log: start-up lines, 1,000 retry warnings that differ only in numbers, error lines, shutdown. */
export function serverLog(repeats = 1000): string {
  const lines = [
    "2026-11-30T07:42:00.000Z INFO  api: listening on 0.0.0.0:8080 (pid 4121)",
    "2026-11-30T07:42:00.004Z INFO  db: connecting to postgres://db.internal:5432/app",
  ];
  for (let i = 1; i <= repeats; i++) {
    const ms = String(i % 1000).padStart(3, "0");
    const s = String(Math.floor(i / 1000) % 60).padStart(2, "0");
    lines.push(`2026-11-30T07:43:${s}.${ms}Z WARN  db: connection refused (ECONNREFUSED), retry ${i}/${repeats} in ${100 + (i % 7) * 50}ms`);
  }
  lines.push(
    "2026-11-30T07:44:01.250Z ERROR db: giving up after 1000 attempts: connect ECONNREFUSED 10.0.3.7:5432",
    "2026-11-30T07:44:01.251Z ERROR api: health check failed: database unavailable",
    "    at Pool.connect (/app/node_modules/pg-pool/index.js:45:11)",
    "    at async main (/app/src/server.ts:88:5)",
    "2026-11-30T07:44:01.300Z INFO  api: shutting down",
  );
  return lines.join("\n") + "\n";
}

/** Long-form `git status` with 150 untracked generated files (git hints included). */
export function bigGitStatus(): string {
  const lines = [
    "On branch feature/token-savers",
    "Your branch is ahead of 'origin/feature/token-savers' by 2 commits.",
    '  (use "git push" to publish your local commits)',
    "",
    "Changes not staged for commit:",
    '  (use "git add <file>..." to update what will be committed)',
    '  (use "git restore <file>..." to discard changes in working directory)',
    "\tmodified:   pipeline/save-tokens.ts",
    "\tmodified:   src/app.ts",
    "",
    "Untracked files:",
    '  (use "git add <file>..." to include in what will be committed)',
  ];
  for (let i = 0; i < 120; i++) lines.push(`\tgen/protos/service_${String(i).padStart(3, "0")}.pb.ts`);
  for (let i = 0; i < 30; i++) lines.push(`\tdocs/api/page-${i}.md`);
  lines.push("", 'nothing added to commit but untracked files present (use "git add" to track)');
  return lines.join("\n") + "\n";
}

/** A TypeScript source file with a long run of similar lines (a lookup table): not a log. */
export function sourceWithTable(): string {
  const lines = ["/** CRC-32 lookup table. */", "export const TABLE = ["];
  for (let i = 0; i < 64; i++) lines.push(`  0x${(i * 0x1db71064).toString(16).padStart(8, "0").slice(-8)}, 0x${(i * 0x77073096).toString(16).padStart(8, "0").slice(-8)},`);
  lines.push("];", "", "export function crc32(bytes: Uint8Array): number {", "  let c = ~0;", "  for (const b of bytes) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);", "  return ~c >>> 0;", "}");
  return lines.join("\n") + "\n";
}

/** Prose (a README section): recognised by no rule. */
export function prose(): string {
  const p =
    "switchyard is a local-first LLM gateway. Coding agents point their base URL at it; it decides, per request, which upstream model and which of the user's accounts serves the request, translates between wire formats where client and provider differ, trims tokens where that is safe, and streams the answer back.";
  return [p, "", p.toUpperCase(), "", p.split(" ").reverse().join(" ")].join("\n");
}
