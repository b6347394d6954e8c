/**
 * No user-visible string cites the SPEC: string and template literals in src/, pipeline/ and formats/
 * (error messages, trace reasons, log lines, CLI output, the admin API's descriptions, metrics help)
 * carry no section number — "(9.6)", "(R-10)", "SPEC 6.3" — and no "SPEC" or "REFERENCE §". The
 * guard's trace decision read "key team-a: 1d budget limit (9.6)" on the dashboard (tryout5).
 * Comments may cite the SPEC; SQL comments inside the stores' migration texts are not shown to anyone.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { literalsOf } from "./support/string-literals.ts";

const ROOT = join(import.meta.dir, "..");
/** A citation of a section: "SPEC", "REFERENCE §", "(9.6)", "(SPEC 6.3)", "(R-10)", "SPEC O-6". */
const CITATION = /\bSPEC\b|REFERENCE\s*§|\((?:SPEC )?\d+\.\d+[a-z]?\)|\([A-Z]-\d+\)|\b(?:SPEC|REFERENCE) [A-Z]-\d+/;
/** Files whose literals are not shown to users: the migrations' SQL (its `--` comments cite the SPEC). */
const SKIP = /\/migrations\.ts$/;

const TSX = new Bun.Transpiler({ loader: "tsx" });

/**
 * The literals of a source file, as {@link literalsOf}; in a .tsx file also those of its compiled form,
 * where the text between JSX tags (no literal in the source: `<p>… (9.6)</p>`) is a string (their
 * line 0: the compiled module's lines are not the file's).
 */
function literalsOfFile(path: string, text: string): Array<{ line: number; text: string }> {
  const own = literalsOf(text);
  if (!path.endsWith(".tsx")) return own;
  return [...own, ...literalsOf(TSX.transformSync(text)).map((l) => ({ line: 0, text: l.text }))];
}

/** The .ts and .tsx files under `dir` (relative to the repository). */
function sources(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) found.push(relative(ROOT, p));
    }
  };
  walk(join(ROOT, dir));
  return found;
}

test("the scanner finds a citation in a string or a template, not in a comment or a regular expression", () => {
  const src = [
    "// SPEC 9.6: a comment",
    "/* (R-10) */ const re = /SPEC \\d+\\.\\d+/;",
    'const a = "over its limit (9.6)";',
    "const b = `sibling of ${t.model ? `x` : \"y\"} (R-10): said`;",
    "const c = 'fine';",
  ].join("\n");
  const hits = literalsOf(src).filter((l) => CITATION.test(l.text));
  expect(hits.map((h) => [h.line, h.text])).toEqual([
    [3, "over its limit (9.6)"],
    [4, " (R-10): said"],
  ]);
});

test("in a .tsx file, text between JSX tags is scanned too (review28: the scanner saw only attributes)", () => {
  const src = '// SPEC 9.6: a comment\nexport const P = (a: string) => <p title="x">Over the key limit (9.6) see {a}</p>;';
  expect(literalsOfFile("page.tsx", src).filter((l) => CITATION.test(l.text)).map((l) => l.text)).toEqual(["Over the key limit (9.6) see "]);
  expect(literalsOf(src).filter((l) => CITATION.test(l.text))).toEqual([]);
});

test("no string or template literal in src/, pipeline/ or formats/ cites a SPEC section", () => {
  const found: string[] = [];
  for (const f of ["src", "pipeline", "formats"].flatMap(sources)) {
    if (SKIP.test(f)) continue;
    for (const l of literalsOfFile(f, readFileSync(join(ROOT, f), "utf8"))) if (CITATION.test(l.text)) found.push(`${f}:${l.line}: ${l.text.slice(0, 120)}`);
  }
  expect(found).toEqual([]);
});
