/**
 * scripts/bench-flush-ab.ts in its `--smoke` mode (issue 17: an interleaved A/B of two trees' SQLite
 * flush in one process): this tree against itself must open both stores, fill and flush them, and
 * print a figure per tree and the ratio line. No timing is asserted: the figures of a smoke run mean
 * nothing.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

test("bench-flush-ab --smoke prints each tree's µs per usage row + trace and the ratio of the second to the first", async () => {
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-flush-ab.ts"), "--smoke", "--tree", `a=${ROOT}`, "--tree", `b=${ROOT}`], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  const lines = out.trim().split("\n");
  expect(lines[0]).toBe("2 rounds × 1 flushes of 255 usage rows + traces per tree; CPU µs of the JS thread per usage row + trace");
  const figure = String.raw`median \d+\.\d{2}  mean \d+\.\d{2}  \(\d+\.\d{2}–\d+\.\d{2}\)`;
  expect(lines[1]).toMatch(new RegExp(`^a {10}${figure}$`));
  expect(lines[2]).toMatch(new RegExp(`^b {10}${figure}$`));
  expect(lines[3]).toMatch(/^b\/a: median ratio \d+\.\d{3}×, mean difference -?\d+\.\d{2} µs per usage row \+ trace$/);
});

test("bench-flush-ab refuses a run without two trees", async () => {
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-flush-ab.ts"), "--smoke", "--tree", `a=${ROOT}`], { stdout: "pipe", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).not.toBe(0);
  expect(err).toContain("give two --tree NAME=DIR");
});
