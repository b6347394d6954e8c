/**
 * scripts/bench-floor.ts in its `--smoke` mode (issue 17: the floor in Bun): the ladder of minimal
 * servers, each adding one SPEC-mandated primitive to the raw pipe, and switchyard must all start, answer
 * every lane they run on (the script throws on a non-200 before measuring) and appear in the printed
 * table with a CPU figure per lane. No timing is asserted: the figures of a smoke run mean nothing.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { TARGETS } from "../../scripts/bench-floor.ts";

const COLUMNS = ["chat→chat json", "chat→chat stream", "messages→messages stream", "messages→chat stream"];

test("bench-floor --smoke prints every rung, switchyard and the gap above the floor, per lane", async () => {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-floor.ts"), "--smoke"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  expect(out).toContain("load errors: 0");
  const lines = out.split("\n");
  const cells = (l: string) => l.split("|").slice(2, -1).map((c) => c.trim());
  const header = lines.find((l) => l.startsWith("| server (CPU µs per request"));
  expect(header && cells(header)).toEqual(COLUMNS);
  const rows = lines.filter((l) => l.startsWith("| ") && l !== header);
  expect(rows.map((l) => l.split("|")[1].trim())).toEqual([...TARGETS.map((t) => t.what), "switchyard above the floor (switchyard − top rung, µs; × the top rung)"]);
  for (const row of rows) {
    const label = row.split("|")[1].trim();
    const cs = cells(row);
    expect(cs, label).toHaveLength(COLUMNS.length);
    cs.forEach((c, i) => {
      // the raw pipe: µs; every other server: µs and its ratio to the raw pipe; rung 6 runs on the translated lane only
      if (label.startsWith("0 ")) expect(c, `${label} / ${COLUMNS[i]}`).toMatch(/^\d+$/);
      else if (label.startsWith("6 ") && i < 3) expect(c, `${label} / ${COLUMNS[i]}`).toBe("-");
      else expect(c, `${label} / ${COLUMNS[i]}`).toMatch(/^-?\d+ \(\d+\.\d\d×\)$/);
    });
  }
}, 180_000);
