/**
 * Reads JavaScriptCore's GC log (`BUN_JSC_logGC=1`, written on stderr) for scripts/bench-budget.ts.
 * JSC logs each stop-the-world pause as it resumes the program, as ` p=<ms>ms` inside a `[GC<…>: …]`
 * line (a collection can pause several times: START, increments, END); the measuring child brackets each
 * timed run with `@@budget <id> start` / `@@budget <id> end` lines on the same stream.
 */

/**
 * µs of GC pauses logged inside each bracket, by bracket id (a bracket that met no collection is 0; a
 * bracket id used several times adds up). Pauses outside every bracket are ignored.
 */
export function gcPausesByBracket(stderr: string): Map<string, number> {
  const out = new Map<string, number>();
  let open: string | undefined;
  for (const line of stderr.split("\n")) {
    const m = line.match(/^@@budget (.+) (start|end)$/);
    if (m) {
      open = m[2] === "start" ? m[1] : undefined;
      if (open && !out.has(open)) out.set(open, 0);
      continue;
    }
    if (!open || !line.startsWith("[GC")) continue;
    for (const p of line.matchAll(/ p=([\d.]+)ms/g)) out.set(open, out.get(open)! + Number(p[1]) * 1000);
  }
  return out;
}
