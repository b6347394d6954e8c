/**
 * scripts/soak.ts --smoke: a few seconds of the soak's mixed traffic against a real switchyard process
 * end with every request answered as its kind expects (a tool call back, a hang-up mid-stream, the
 * combo's 500 hidden by its second target, 400 for bad JSON, 404 for an unknown model) and counted
 * once in `switchyard usage` — the invariants the long run checks, without its figures.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../support/instance.ts";

test("the soak's smoke run: every kind answered as expected, every request one usage row, no descriptor leak", async () => {
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/soak.ts"), "--smoke"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(out.split("\n").filter((l) => l.startsWith("problem:"))).toEqual([]);
  expect({ code, last: out.trim().split("\n").at(-1) }).toEqual({ code: 0, last: "soak: ok" });
  const sent = Number(/^(\d+) requests in 8 s; 0 did not complete$/m.exec(out)?.[1]);
  expect(sent).toBeGreaterThan(100);
  // the smoke run sends the kinds in turn: each is there
  for (const kind of ["tool call messages→chat      200:tool", "client hangs up mid-stream   200:hung-up", "combo, first target 500      200", "bad JSON                     400", "unknown model                404", "gemini→messages stream       200"]) {
    expect(out).toContain(kind);
  }
  expect(err).not.toContain("error:");
}, 90_000);
