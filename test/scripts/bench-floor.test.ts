/**
 * scripts/bench-floor.ts in its `--smoke` mode (issue 17: the floor in Bun): the ladder of minimal
 * servers, each adding one SPEC-mandated primitive to the raw pipe, and switchyard must all start, answer
 * every lane they run on (the script throws on a non-200 before measuring) and appear in the printed
 * table with a CPU figure per lane. No timing is asserted: the figures of a smoke run mean nothing.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TARGETS } from "../../scripts/bench-floor.ts";
import { floorFileName, newestFloorFile, readFloorJson } from "../../scripts/lib/floor-json.ts";

const COLUMNS = ["chat→chat json", "chat→chat stream", "messages→messages json", "messages→messages stream", "gemini→gemini json", "gemini→gemini stream", "messages→chat stream"];

test("bench-floor --smoke prints every rung, switchyard and the gap above the floor, per lane, and writes them as JSON with --json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-floor-test-"));
  const file = join(dir, floorFileName(new Date()));
  try {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-floor.ts"), "--smoke", "--json", file], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
    // The JSON: the run's stamp, then per lane every server it ran with its CPU µs and ratio to the raw pipe
    // (the figures of the printed table), found by scripts/bench-budget.ts as the newest floor file.
    expect(newestFloorFile(dir)).toBe(file);
    const json = readFloorJson(file);
    expect(json.command).toBe(`bun scripts/bench-floor.ts --smoke --json ${file}`);
    expect(json.commit === null || /^[0-9a-f]{40}$/.test(json.commit), String(json.commit)).toBe(true);
    expect(Date.now() - Date.parse(json.when)).toBeLessThan(600_000);
    expect({ rounds: json.rounds, seconds: json.seconds, loadErrors: json.loadErrors, bun: json.machine.bun }).toEqual({ rounds: 1, seconds: 1, loadErrors: 0, bun: Bun.version });
    expect(json.lanes.map((l) => [l.name, l.kind, l.topRung])).toEqual([
      ["chat→chat json", "native", "5"],
      ["chat→chat stream", "native", "5"],
      ["messages→messages json", "native", "5"],
      ["messages→messages stream", "native", "5"],
      ["gemini→gemini json", "native", "5"],
      ["gemini→gemini stream", "native", "5"],
      ["messages→chat stream", "translated", "6"],
    ]);
    for (const l of json.lanes) {
      const keys = TARGETS.map((t) => t.key).filter((k) => k !== "6" || l.kind === "translated");
      expect(Object.keys(l.servers), l.name).toEqual(keys);
      expect(l.servers["0"]!.ratioToRaw, l.name).toBe(1);
      for (const k of keys) {
        const c = l.servers[k]!;
        expect(c.cpuUs > 0 && c.ratioToRaw > 0, `${l.name} / ${k}: ${JSON.stringify(c)}`).toBe(true);
        // the same figure as the table's cell (µs rounded to 1)
        const row = out.split("\n").find((x) => x.startsWith(`| ${TARGETS.find((t) => t.key === k)!.what} |`))!;
        expect(row.split("|")[2 + COLUMNS.indexOf(l.name)]!.trim(), `${l.name} / ${k}`).toStartWith(c.cpuUs.toFixed(0));
      }
    }
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
        else if (label.startsWith("6 ") && i < COLUMNS.length - 1) expect(c, `${label} / ${COLUMNS[i]}`).toBe("-");
        else expect(c, `${label} / ${COLUMNS[i]}`).toMatch(/^-?\d+ \(\d+\.\d\d×\)$/);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

test("bench-floor --lanes names lanes of the table only, and is refused with --write (the doc's table keeps every lane)", async () => {
  const run = async (...args: string[]) => {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-floor.ts"), "--smoke", ...args], { stdout: "pipe", stderr: "pipe" });
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    return { code, err };
  };
  const unknown = await run("--lanes", "gemini→gemini sse");
  expect(unknown.code).not.toBe(0);
  expect(unknown.err).toContain('--lanes: no lane "gemini→gemini sse": one of chat→chat json, chat→chat stream, messages→messages json');
  const written = await run("--lanes", "gemini→gemini stream", "--write");
  expect(written.code).not.toBe(0);
  expect(written.err).toContain("--lanes with --write: the table in docs/performance.md keeps every lane");
});
