/**
 * scripts/bench-budget.ts in its quick mode (as CI runs it, issue 17): it must run to the end and print
 * every named row of the budget with a figure for every lane. No timing is asserted: speed lives in
 * scripts/bench and the budget table itself.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROWS = [
  "raw Bun pipe (baseline)",
  "HTTP framework dispatch",
  "body read and JSON parse",
  "guard",
  "resolve/order/pick",
  "translate",
  "executor call setup and abort wiring",
  "reply driver (tap / re-translate)",
  "bookkeeping and the rest (remainder)",
  "whole request (raw + framework + pipeline)",
  "whole request × raw pipe",
];
const LANES = ["chat→chat json", "chat→chat stream", "messages→chat json", "messages→chat stream"];

test("bench-budget --quick prints every row of the budget with a number per lane", async () => {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-budget.ts"), "--quick"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  const header = out.split("\n").find((l) => l.startsWith("| part"));
  expect(header?.split("|").slice(2, -1).map((c) => c.trim())).toEqual(LANES);
  for (const row of ROWS) {
    const line = out.split("\n").find((l) => l.startsWith(`| ${row} |`));
    expect(line, row).toBeDefined();
    const cells = line!.split("|").slice(2, -1).map((c) => c.trim());
    expect(cells).toHaveLength(LANES.length);
    // "12.3" (baseline), "12.3 / 4.5" (measured / target), "3.10× / 2×" (ratio / target ratio)
    for (const c of cells) expect(c, `${row}: ${c}`).toMatch(/^-?\d+(\.\d+)?×?( \/ -?\d+(\.\d+)?×?)?$/);
  }
}, 120_000);
