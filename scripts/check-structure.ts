#!/usr/bin/env bun
/**
 * Checks the layout rules of the repository (issue 18) and prints one line per check:
 *
 * 1. one module per SPEC stage in pipeline/ (SPEC 3: guard, redact, resolve, order, pick, translate,
 *    save-tokens, execute, commit, re-translate);
 * 2. no source file (src/, pipeline/, formats/, scripts/, test/) over {@link MAX_LINES} lines;
 * 3. no import cycle inside pipeline/ or inside formats/ (type-only imports count: a cycle of types
 *    is still two modules that cannot be read one before the other);
 * 4. src/ imports at most {@link MAX_PIPELINE_MODULES_FROM_SRC} pipeline modules (pipeline/index.ts
 *    and pipeline/ports.ts are the public surface);
 * 5. the README's "Where things live" section names pipeline/commit.ts, and every repository path it
 *    names exists;
 * 6. no module of src/, pipeline/ or formats/ imports a package index listed in {@link HEAVY_INDEXES}
 *    (a value import of the `effect` index loads every Effect module: +3.5 MB heap, +11 MB RSS;
 *    docs/performance.md items 15 and 22); type-only imports are free and allowed.
 *
 * Usage: `bun scripts/check-structure.ts` (exit status 1 when a check fails). test/structure.test.ts
 * runs the same checks inside the test suite, so CI counts them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** The most lines a source file may have. */
export const MAX_LINES = 700;
/** The most distinct pipeline modules src/ may import. */
export const MAX_PIPELINE_MODULES_FROM_SRC = 3;
/** The stages of SPEC 3, each a module pipeline/<stage>.ts. */
export const SPEC_STAGES = ["guard", "redact", "resolve", "order", "pick", "translate", "save-tokens", "execute", "commit", "re-translate"];

/** The outcome of one check: `problems` is empty when it passes. */
export interface CheckResult {
  name: string;
  problems: string[];
  /** What was measured, for the report (e.g. the largest file). */
  detail?: string;
}

const SOURCE_DIRS = ["src", "pipeline", "formats", "scripts", "test"];

/** Every .ts file below `dir` (relative to `root`), skipping node_modules and fixtures. */
function tsFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(join(root, d));
    } catch {
      return;
    }
    for (const n of names) {
      if (n === "node_modules" || n === "fixtures") continue;
      const rel = join(d, n);
      const st = statSync(join(root, rel));
      if (st.isDirectory()) walk(rel);
      else if (/\.tsx?$/.test(n)) out.push(rel);
    }
  };
  walk(dir);
  return out.sort();
}

const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** The repository files a module imports (relative specifiers only), as root-relative paths. */
export function importsOf(root: string, file: string): string[] {
  const text = readFileSync(join(root, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2];
    if (!spec || !spec.startsWith(".")) continue;
    out.add(relative(root, resolve(root, dirname(file), spec)));
  }
  return [...out];
}

/** Check 1: pipeline/<stage>.ts exists for every SPEC stage. */
export function checkStages(root: string): CheckResult {
  const problems = SPEC_STAGES.filter((s) => !existsSync(join(root, "pipeline", `${s}.ts`))).map((s) => `no module pipeline/${s}.ts for the SPEC stage ${s}`);
  return { name: `one module per SPEC stage in pipeline/ (${SPEC_STAGES.length} stages)`, problems };
}

/** Check 2: no source file over MAX_LINES lines. */
export function checkFileSizes(root: string): CheckResult {
  const sizes = SOURCE_DIRS.flatMap((d) => tsFiles(root, d)).map((f) => ({ f, n: readFileSync(join(root, f), "utf8").split("\n").length - 1 }));
  sizes.sort((a, b) => b.n - a.n);
  const problems = sizes.filter((s) => s.n > MAX_LINES).map((s) => `${s.f} has ${s.n} lines (at most ${MAX_LINES})`);
  const top = sizes[0];
  return { name: `no source file over ${MAX_LINES} lines`, problems, detail: top ? `${sizes.length} files, largest ${top.f} (${top.n})` : undefined };
}

/** The import cycles among the .ts files below `dir` (strongly connected components of two or more files, or a self-import). */
export function cyclesIn(root: string, dir: string): string[][] {
  const files = tsFiles(root, dir);
  const inDir = new Set(files);
  const edges = new Map(files.map((f) => [f, importsOf(root, f).filter((t) => inDir.has(t))]));
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(comp.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return cycles;
}

/** Check 3: no import cycle inside pipeline/ or formats/. */
export function checkCycles(root: string): CheckResult {
  const problems = ["pipeline", "formats"].flatMap((d) => cyclesIn(root, d).map((c) => `import cycle in ${d}/: ${c.join(" ↔ ")}`));
  return { name: "no import cycle inside pipeline/ or formats/", problems };
}

/** Check 4: src/ imports at most MAX_PIPELINE_MODULES_FROM_SRC distinct pipeline modules. */
export function checkSrcSurface(root: string): CheckResult {
  const used = new Map<string, string[]>();
  for (const f of tsFiles(root, "src")) {
    for (const t of importsOf(root, f)) {
      if (!t.startsWith("pipeline/")) continue;
      used.set(t, [...(used.get(t) ?? []), f]);
    }
  }
  const modules = [...used.keys()].sort();
  const problems =
    modules.length > MAX_PIPELINE_MODULES_FROM_SRC
      ? [
          `src/ imports ${modules.length} pipeline modules (at most ${MAX_PIPELINE_MODULES_FROM_SRC}): ` +
            modules.map((m) => `${m} (${used.get(m)!.length} files, e.g. ${used.get(m)![0]})`).join(", ") +
            "; import from pipeline/index.ts (export what is missing there) or pipeline/ports.ts",
        ]
      : [];
  return { name: `src/ imports at most ${MAX_PIPELINE_MODULES_FROM_SRC} pipeline modules`, problems, detail: modules.join(", ") };
}

/** Check 5: the README's "Where things live" names pipeline/commit.ts, and the paths it names exist. */
export function checkReadmeMap(root: string): CheckResult {
  const name = 'README "Where things live" names pipeline/commit.ts and only paths that exist';
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.search(/^#+ Where things live\s*$/m);
  if (start < 0) return { name, problems: ['README.md has no "Where things live" section'] };
  const rest = readme.slice(start);
  const next = rest.slice(1).search(/^## /m);
  const section = next < 0 ? rest : rest.slice(0, next + 1);
  const problems: string[] = [];
  if (!section.includes("pipeline/commit.ts")) problems.push("the section does not name pipeline/commit.ts");
  const paths = new Set([...section.matchAll(/`((?:src|pipeline|formats|scripts|test|docs)\/[^`\s]*)`/g)].map((m) => m[1].replace(/[,.;:]$/, "")));
  for (const p of paths) {
    if (p.includes("*") || p.includes("<")) continue; // patterns like formats/<fmt>/
    if (!existsSync(join(root, p))) problems.push(`the section names ${p}, which does not exist`);
  }
  return { name, problems, detail: `${paths.size} paths named` };
}

/** Package indexes the app imports by module instead (each loads far more than one module needs). */
export const HEAVY_INDEXES = ["effect", "prom-client"];

/** Check 6: no value import of a {@link HEAVY_INDEXES} package index from src/, pipeline/ or formats/. */
export function checkHeavyIndexes(root: string): CheckResult {
  const problems: string[] = [];
  const re = /(?:^|[\s;])(import|export)\s+(type\s+)?(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const dir of ["src", "pipeline", "formats"]) {
    for (const f of tsFiles(root, dir)) {
      const text = readFileSync(join(root, f), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:])\/\/.*$/gm, "$1");
      for (const m of text.matchAll(re)) {
        const spec = m[3] ?? m[4];
        if (m[2] || !spec || !HEAVY_INDEXES.includes(spec)) continue;
        problems.push(`${f} imports the ${spec} package index; import its modules (e.g. ${spec}/…) instead`);
      }
    }
  }
  return { name: `no import of a package index that loads every module (${HEAVY_INDEXES.join(", ")})`, problems };
}

/** All checks, in order. */
export function runChecks(root: string): CheckResult[] {
  return [checkStages(root), checkFileSizes(root), checkCycles(root), checkSrcSurface(root), checkReadmeMap(root), checkHeavyIndexes(root)];
}

if (import.meta.main) {
  const root = resolve(dirname(import.meta.path), "..");
  const results = runChecks(root);
  for (const r of results) {
    console.log(`${r.problems.length === 0 ? "ok  " : "FAIL"} ${r.name}${r.detail ? ` — ${r.detail}` : ""}`);
    for (const p of r.problems) console.log(`       ${p}`);
  }
  const failed = results.filter((r) => r.problems.length > 0).length;
  console.log(`${results.length - failed} of ${results.length} structure checks pass`);
  process.exit(failed === 0 ? 0 : 1);
}
