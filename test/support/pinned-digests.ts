/**
 * Golden files of SHA-256 digests (name → hex) that pin a test's output bytes: a change that alters
 * what a client receives fails the test; a change meant to alter it rewrites the file with the test's
 * `UPDATE_…_GOLDEN=1` variable (sorted keys, one per line, so its diff shows which outputs moved).
 */
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

/**
 * Compares `got` with the digests in `goldenPath` (same names, same digests; a failure names the
 * output), after writing `got` there first when `update` is set. Throws (a failed expect) when the file
 * is missing.
 */
export function expectPinnedDigests(goldenPath: string, got: Record<string, string>, update: boolean): void {
  if (update) {
    const sorted = Object.fromEntries(Object.entries(got).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    writeFileSync(goldenPath, JSON.stringify(sorted, null, 1) + "\n");
  }
  expect(existsSync(goldenPath)).toBe(true);
  const golden = JSON.parse(readFileSync(goldenPath, "utf8")) as Record<string, string>;
  expect(Object.keys(got).sort()).toEqual(Object.keys(golden).sort());
  for (const [k, v] of Object.entries(got)) expect(`${k}: ${v}`).toBe(`${k}: ${golden[k]}`);
}
