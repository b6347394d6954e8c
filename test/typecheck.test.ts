/**
 * The tree typechecks (`tsc --noEmit`, tsconfig.json: src, pipeline, formats, scripts and test; and
 * the dashboard's browser code with its own tsconfig). Bun runs TypeScript without checking it, so a
 * test that reads a property its type does not have passes at run time; CI counts this test so such a
 * change does not land unseen (a test file with a type error reached main on 2026-12-05).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const TSC = join(ROOT, "node_modules", ".bin", "tsc");

for (const project of ["tsconfig.json", "src/dashboard/client/tsconfig.json"]) {
  test(`tsc --noEmit -p ${project} reports no error`, () => {
    const r = Bun.spawnSync([TSC, "--noEmit", "-p", join(ROOT, project)], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const out = (r.stdout.toString() + r.stderr.toString()).trim();
    expect(out).toBe("");
    expect(r.exitCode).toBe(0);
  }, 180_000);
}
