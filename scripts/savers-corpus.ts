/**
 * The token savers' report (SPEC S-1, S-4), shared by `scripts/bench-savers` and its CI test
 * (test/e2e/savers-bench.test.ts):
 *
 * - {@link buildCorpus}: real tool outputs generated on this machine at run time — `git show` of this
 *   repository's recent commits, `git status` of a scratch clone with edits, renames, deletions and
 *   generated untracked files, `git log`, `grep -rn` (ripgrep when installed) over node_modules,
 *   `ls -la` listings, tree-like listings drawn from the file system (no `tree` binary needed), gcc
 *   under make on a generated C file with repeated warnings and one error (when `cc` and `make` are
 *   installed), and two logs of real connection attempts to a closed local port (one naming it as
 *   `127.0.0.1:PORT:`, the shape once taken for grep output: try17 T1).
 * - {@link measure}: each output through the savers (pipeline/savers/, the same function the gateway
 *   uses): length before and after, and what was kept, checked per kind (file names, changed lines,
 *   hunk headers, status entries, error lines, listing names or their elision count; for logs and
 *   compiler output also the last line, and lines kept plus lines counted as elided adding up).
 * - {@link simulateConversation}: a multi-turn agent conversation through a real gateway to a fake
 *   OpenAI-compatible upstream, once with the savers and once with `X-Switchyard-Token-Saver: off`,
 *   counting prefix-cache hits (turn N+1's upstream bytes start with all of turn N's conversation) and
 *   the bytes each turn adds after the common prefix.
 *
 * Nothing here is timed: the figures are sizes and counts.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, appendFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { compressToolResult, MIN_CHARS } from "../pipeline/savers/index.ts";
import { startGateway } from "../test/support/gateway.ts";

/** The kinds of tool output in the corpus. */
export type CorpusKind = "git diff" | "git status" | "git log" | "search" | "ls -la" | "tree" | "log" | "compiler";

/** One real tool output. */
export interface CorpusItem {
  kind: CorpusKind;
  /** The command (or what produced the output), for the report. */
  source: string;
  text: string;
}

/** Repository root (this checkout). */
export const ROOT = join(import.meta.dir, "..");

/** Runs a command; its stdout, or "" when it fails. Output is capped at `maxLines` lines. */
function run(cmd: string[], cwd = ROOT, maxLines = 3000): string {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "ignore" });
  let out = r.stdout.toString();
  const lines = out.split("\n");
  if (lines.length > maxLines) out = lines.slice(0, maxLines).join("\n") + "\n";
  // Agents cap what a command returns; here at MAX_OUTPUT characters, cut at a line end.
  if (out.length > MAX_OUTPUT) out = out.slice(0, out.lastIndexOf("\n", MAX_OUTPUT) + 1);
  return out;
}

/** The longest tool output in the corpus, in characters (longer command output is cut at a line end). */
export const MAX_OUTPUT = 60_000;

/** Packages under node_modules, largest-first by name list, that exist on this machine. */
function packages(names: string[]): string[] {
  return names.filter((n) => existsSync(join(ROOT, "node_modules", n)));
}

/** `tree`-style drawing of a directory (Unicode guides, `N directories, M files` summary), depth-limited. */
export function drawTree(dir: string, depth: number): string {
  const lines = [relative(ROOT, dir) || "."];
  let dirs = 0;
  let files = 0;
  const walk = (d: string, prefix: string, level: number) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      const p = join(d, name);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        // a dangling link is listed as a file
      }
      lines.push(`${prefix}${last ? "└── " : "├── "}${name}`);
      if (isDir) {
        dirs++;
        if (level < depth) walk(p, prefix + (last ? "    " : "│   "), level + 1);
      } else files++;
    });
  };
  walk(dir, "", 1);
  lines.push("", `${dirs} directories, ${files} files`);
  return lines.join("\n") + "\n";
}

/** The reason a TCP connection to a closed port on 127.0.0.1 fails on this machine (e.g. `ECONNREFUSED`), `attempts` times, and the port. */
async function refusedConnections(attempts: number): Promise<{ port: number; errors: string[] }> {
  // A port that was just free: bind, note it, close.
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const errors: string[] = [];
  for (let i = 1; i <= attempts; i++) {
    try {
      const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      s.end();
      errors.push("connected");
    } catch (e) {
      errors.push((e as { code?: string }).code ?? String(e));
    }
  }
  return { port, errors };
}

/** A real log: `attempts` TCP connections to a closed port on 127.0.0.1, each failure logged, then the give-up errors. */
async function connectionLog(attempts: number): Promise<string> {
  const { port, errors } = await refusedConnections(attempts);
  const lines = [`${new Date().toISOString()} INFO  worker: starting (pid ${process.pid})`, `${new Date().toISOString()} INFO  db: connecting to 127.0.0.1:${port}`];
  errors.forEach((err, k) => lines.push(`${new Date().toISOString()} WARN  db: connect to 127.0.0.1:${port} failed (${err}), retry ${k + 1}/${attempts} in ${50 * (1 + ((k + 1) % 4))}ms`));
  const last = errors.at(-1) ?? "";
  lines.push(
    `${new Date().toISOString()} ERROR db: giving up after ${attempts} attempts: ${last}`,
    `${new Date().toISOString()} ERROR worker: health check failed: database unavailable`,
    `${new Date().toISOString()} INFO  worker: shutting down`,
  );
  return lines.join("\n") + "\n";
}

/**
 * The same attempts logged the way try17 T1's worker did, the address and port followed by a colon
 * (`2026-12-05 WARN worker retry connecting to 127.0.0.1:39811: ECONNREFUSED`), ending in a FATAL line.
 */
async function hostPortLog(attempts: number): Promise<string> {
  const { port, errors } = await refusedConnections(attempts);
  const day = new Date().toISOString().slice(0, 10);
  const lines = errors.map((err) => `${day} WARN worker retry connecting to 127.0.0.1:${port}: ${err}`);
  lines.push(`FATAL: giving up after ${attempts} attempts`);
  return lines.join("\n") + "\n";
}

/**
 * Real gcc output under make (when `cc` and `make` are installed; "" otherwise): a generated C file with
 * `unused` unused variables, `signed` signed/unsigned comparisons, an unused parameter and a missing
 * semicolon, built with `-Wall -Wextra` (and `flags`: `-fno-diagnostics-show-caret` gives one line per
 * diagnostic, as build systems and CI logs often do, the shape try17 T11 saw taken for grep output).
 */
function compilerOutput(unused: number, signed: number, flags = ""): string {
  if (!Bun.which("cc") || !Bun.which("make")) return "";
  const dir = mkdtempSync(join(tmpdir(), "savers-cc-"));
  try {
    const c = ["static int f(int x, int unused_param) { return x; }", "int main(void) {", "  int r = 0;"];
    for (let i = 0; i < unused; i++) c.push(`  int tmp${i};`);
    for (let i = 0; i < signed; i++) c.push(`  unsigned u${i} = ${i}; int s${i} = -${i}; if (u${i} < s${i}) r++;`);
    c.push("  r += f(1, 2)", "  return r;", "}");
    writeFileSync(join(dir, "engine.c"), c.join("\n") + "\n");
    writeFileSync(join(dir, "Makefile"), `engine.o: engine.c\n\tcc -Wall -Wextra ${flags}${flags ? " " : ""}-c engine.c -o engine.o\n`);
    const r = Bun.spawnSync(["make"], { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, LC_ALL: "C" } });
    return r.stdout.toString() + r.stderr.toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A scratch clone of this repository with staged, unstaged, renamed, deleted and generated untracked files. */
function dirtyClone(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "savers-status-"));
  Bun.spawnSync(["git", "clone", "-q", "--shared", ROOT, dir], { stdout: "ignore", stderr: "ignore" });
  const tracked = run(["git", "ls-files"], dir).split("\n").filter((f) => /\.(ts|md)$/.test(f));
  const pick = (n: number, from: number) => tracked.filter((_, i) => i % 7 === from).slice(0, n);
  for (const f of pick(6, 1)) appendFileSync(join(dir, f), "\n// edited by scripts/savers-corpus.ts\n");
  for (const f of pick(3, 2)) rmSync(join(dir, f));
  const staged = pick(4, 3);
  for (const f of staged) appendFileSync(join(dir, f), "\n// staged\n");
  Bun.spawnSync(["git", "add", ...staged], { cwd: dir });
  const moved = pick(1, 4)[0];
  if (moved) Bun.spawnSync(["git", "mv", moved, moved.replace(/(\.\w+)$/, ".moved$1")], { cwd: dir });
  for (const [sub, n] of [["src/generated", 140], ["docs/api-html", 35], ["scratch", 3]] as const) {
    mkdirSync(join(dir, sub), { recursive: true });
    for (let i = 0; i < n; i++) writeFileSync(join(dir, sub, `chunk-${i.toString(16).padStart(4, "0")}.js`), "x");
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Generates the corpus on this machine. `quick`: fewer commits, packages and attempts (the CI test).
 * Outputs shorter than the savers' threshold (SPEC S-1: 500 characters) are left out.
 */
export async function buildCorpus(opts: { quick?: boolean } = {}): Promise<CorpusItem[]> {
  const quick = opts.quick ?? false;
  const items: CorpusItem[] = [];
  const add = (kind: CorpusKind, source: string, text: string) => {
    if (text.length >= MIN_CHARS) items.push({ kind, source, text });
  };

  // git show of recent commits (with and without the commit header), and git log.
  const shas = run(["git", "log", "--format=%h", "-n", quick ? "6" : "40"]).split("\n").filter(Boolean);
  shas.forEach((sha, i) => {
    const withHeader = i % 2 === 0;
    add("git diff", `git show ${withHeader ? "" : "--format= "}${sha}`, run(["git", "show", ...(withHeader ? [] : ["--format="]), sha]));
  });
  add("git log", "git log --stat -n 5", run(["git", "log", "--stat", "-n", "5"]));
  add("git log", "git log --format='%h %ad %an %s' --date=iso -n 80", run(["git", "log", "--format=%h %ad %an %s", "--date=iso", "-n", "80"]));

  // git status of a dirty scratch clone, long and short form.
  const clone = dirtyClone();
  try {
    add("git status", "git status -uall (scratch clone: edits, deletions, a rename, 178 untracked generated files)", run(["git", "status", "-uall"], clone.dir));
    add("git status", "git status -s -uall (same clone)", run(["git", "status", "-s", "-uall"], clone.dir));
    add("git diff", "git diff (same clone)", run(["git", "diff"], clone.dir));
  } finally {
    clone.cleanup();
  }

  // Searches over node_modules (ripgrep when installed, else grep -rn).
  const rg = Bun.which("rg");
  const searches: Array<[string, string]> = [
    ["export function", "node_modules/effect/src"],
    ["throw new Error", "node_modules/elysia/dist"],
    ["TODO", "node_modules/effect/src"],
    ["@deprecated", "node_modules/openai/resources"],
    ["class [A-Za-z]+ extends", "node_modules/@anthropic-ai/sdk"],
    ["process\\.env", "node_modules"],
    ["Symbol\\.for\\(", "node_modules/effect/src"],
  ];
  for (const [pat, dir] of (quick ? searches.slice(0, 3) : searches).filter(([, d]) => existsSync(join(ROOT, d)))) {
    const cmd = rg ? ["rg", "-n", pat, dir] : ["grep", "-rnE", pat, dir];
    add("search", cmd.join(" "), run(cmd, ROOT, quick ? 400 : 2000));
  }
  add("search", "grep -rn -C1 cache_control formats", run(["grep", "-rn", "-C1", "cache_control", "formats"]));
  // Listings.
  const lsDirs = ["node_modules", "node_modules/.bin", ".", "formats/openai-responses", ...packages(quick ? [] : ["effect/dist/esm", "elysia/dist", "typescript/lib"]).map((p) => `node_modules/${p}`)];
  for (const d of lsDirs) add("ls -la", `ls -la ${d}`, run(["ls", "-la", d]));
  add("ls -la", "ls -laR formats", run(["ls", "-laR", "formats"]));
  // A directory of 420 generated files, one of them mode 600: the odd one an agent looks for after a
  // permission error, past the first 200 entries the listing rule keeps.
  const big = mkdtempSync(join(tmpdir(), "savers-ls-"));
  try {
    for (let i = 0; i < 420; i++) writeFileSync(join(big, `shard-${String(i).padStart(4, "0")}.parquet`), "x".repeat(i % 97));
    chmodSync(join(big, "shard-0377.parquet"), 0o600);
    add("ls -la", "ls -la of a directory of 420 generated files, one of them mode 600", run(["ls", "-la", big]));
  } finally {
    rmSync(big, { recursive: true, force: true });
  }

  // Tree-like listings drawn from the file system.
  add("tree", "tree formats test/formats", drawTree(join(ROOT, "formats"), 3) + drawTree(join(ROOT, "test/formats"), 3));
  for (const p of packages(quick ? ["elysia"] : ["elysia", "effect", "openai", "@anthropic-ai/sdk"])) add("tree", `tree -L 2 node_modules/${p}`, drawTree(join(ROOT, "node_modules", p), 2));

  // Logs of real connection attempts.
  add("log", "a worker's log: connection attempts to a closed local port", await connectionLog(quick ? 120 : 600));
  add("log", "a worker's log naming 127.0.0.1:PORT: (try17 T1's shape), ending in FATAL", await hostPortLog(quick ? 100 : 300));

  // gcc under make (stdout then stderr, as an agent's shell tool returns them).
  const [unused, signed] = quick ? [60, 6] : [200, 20];
  add("compiler", `make: gcc -Wall -Wextra, ${unused} unused variables, ${signed} sign comparisons, 1 error`, compilerOutput(unused, signed));
  add("compiler", `make: the same with -fno-diagnostics-show-caret (one line per diagnostic)`, compilerOutput(unused, signed, "-fno-diagnostics-show-caret"));
  return items;
}

/** One corpus item through the savers. */
export interface Measured {
  item: CorpusItem;
  before: number;
  after: number;
  /** The rule that shortened it, or undefined when it was left as it is. */
  rule?: string;
  /** What the kind's checks found missing from the output (empty: everything expected was kept). */
  missing: string[];
  /** What was kept, by what (`file names` → [kept, of]). */
  kept: Record<string, [number, number]>;
}

/** Runs one item through the savers and checks what was kept. */
export function measure(item: CorpusItem): Measured {
  const c = compressToolResult(item.text);
  const out = c?.text ?? item.text;
  const { missing, kept } = CHECKS[item.kind](item.text, out);
  return { item, before: item.text.length, after: out.length, rule: c?.rule, missing, kept };
}

type Check = (original: string, out: string) => { missing: string[]; kept: Record<string, [number, number]> };

const lines = (s: string) => s.split("\n");

/** Diffs: every file name and hunk header; every changed line outside the elided middle of very long runs (lines over 400 characters: their first 240). */
const checkDiff: Check = (orig, out) => {
  const missing: string[] = [];
  const files = [...orig.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)].map((m) => m[2]!);
  for (const f of files) if (!out.includes(f)) missing.push(`file ${f}`);
  const ls = lines(orig);
  let changed = 0;
  let keptChanged = 0;
  for (let i = 0; i < ls.length; i++) {
    const l = ls[i]!;
    if (/^@@+ /.test(l) && !out.includes(l.length > 400 ? l.slice(0, 240) : l)) missing.push(`hunk ${l.slice(0, 60)}`);
    if (!/^[+-]/.test(l) || /^(\+\+\+|---) /.test(l)) continue;
    // The run of consecutive added (or removed) lines this one belongs to.
    let start = i;
    while (start > 0 && ls[start - 1]![0] === l[0] && !/^(\+\+\+|---) /.test(ls[start - 1]!)) start--;
    let end = i;
    while (end + 1 < ls.length && ls[end + 1]![0] === l[0] && !/^(\+\+\+|---) /.test(ls[end + 1]!)) end++;
    changed++;
    const present = out.includes(l.length > 400 ? l.slice(0, 240) : l);
    if (present) keptChanged++;
    const mustKeep = end - start + 1 <= 60 || i - start < 30;
    if (mustKeep && !present) missing.push(`changed line ${l.slice(0, 60)}`);
  }
  const hunks = ls.filter((l) => /^@@+ /.test(l));
  return { missing, kept: { "file names": [files.filter((f) => out.includes(f)).length, files.length], "hunk headers": [hunks.filter((h) => out.includes(h.length > 400 ? h.slice(0, 240) : h)).length, hunks.length], "changed lines": [keptChanged, changed] } };
};

/** git status: branch line, every entry outside the untracked section, the untracked files' directories. */
const checkStatus: Check = (orig, out) => {
  const missing: string[] = [];
  const branch = /^(On branch .*|## .*)$/m.exec(orig)?.[1];
  if (branch && !out.includes(branch)) missing.push(`branch line ${branch}`);
  let section = "";
  let entries = 0;
  let untracked = 0;
  const dirs = new Set<string>();
  for (const l of lines(orig)) {
    if (/^\S.*:$/.test(l)) section = l;
    const short = /^([ MTADRCU?!]{2}) (.+)$/.exec(l);
    const long = /^\t(?:(?:new file|modified|deleted|renamed|typechange):\s+)?(.+)$/.exec(l);
    const path = short?.[2] ?? long?.[1];
    if (!path) continue;
    const isUntracked = short ? short[1] === "??" : section.startsWith("Untracked");
    if (isUntracked) {
      untracked++;
      dirs.add(path.includes("/") ? path.split("/")[0]! + "/" : path);
    } else {
      entries++;
      for (const p of path.split(" -> ")) if (!out.includes(p)) missing.push(`entry ${p}`);
    }
  }
  for (const d of dirs) if (!out.includes(d)) missing.push(`untracked directory ${d}`);
  const keptEntries = entries - missing.filter((m) => m.startsWith("entry ")).length;
  return { missing, kept: { "tracked entries": [keptEntries, entries], "untracked directories": [[...dirs].filter((d) => out.includes(d)).length, dirs.size], "untracked files listed": [untrackedListed(orig, out), untracked] } };
};

/** Untracked file paths of a status that appear in full in the output. */
function untrackedListed(orig: string, out: string): number {
  let section = "";
  let n = 0;
  for (const l of lines(orig)) {
    if (/^\S.*:$/.test(l)) section = l;
    const short = /^\?\? (.+)$/.exec(l)?.[1];
    const long = section.startsWith("Untracked") ? /^\t(.+)$/.exec(l)?.[1] : undefined;
    const p = short ?? long;
    if (p && out.includes(p)) n++;
  }
  return n;
}

/** Search results: every file name. */
const checkSearch: Check = (orig, out) => {
  const files = new Set<string>();
  for (const l of lines(orig)) {
    const m = /^([^:\s][^:]*?)[:-](\d+)[:-]/.exec(l);
    if (m) files.add(m[1]!);
  }
  const missing = [...files].filter((f) => !out.includes(f)).map((f) => `file ${f}`);
  // A line that is neither a match nor a context line (`grep: x: Permission denied`) stays as it is.
  const have = new Set(lines(out));
  for (const l of lines(orig)) if (l !== "" && l !== "--" && !/^([^:\s][^:]*?)[:-](\d+)[:-]/.test(l) && !have.has(l)) missing.push(`line ${l.slice(0, 80)}`);
  const matches = lines(orig).filter((l) => /^[^:\s][^:]*?:\d+:/.test(l)).length;
  const keptMatches = lines(out).filter((l) => /^\s*\d+:|^[^:\s][^:]*?:\d+:/.test(l)).length;
  return { missing, kept: { "file names": [files.size - missing.length, files.size], "matching lines": [Math.min(keptMatches, matches), matches] } };
};

/**
 * ls -la: every name, or the names kept plus the elided count add up to all of them; every kept entry
 * keeps its mode, owner and group (a root-owned mode-600 file must still read as one); an entry whose
 * mode and owner differ from the most common of its directory is never elided.
 */
const checkListing: Check = (orig, out) => {
  const missing: string[] = [];
  let total = 0;
  let present = 0;
  let modes = 0;
  const outLines = lines(out);
  const entries: { key: string; name: string; full: string }[] = [];
  for (const l of lines(orig)) {
    const m = /^([-dlcbps][rwxsStT-]{9}[.@+]?)\s+\d+\s+(\S+)\s+(\S+)\s+[\d,]+\s+\S+\s+\S+\s+\S+\s+(.+)$/.exec(l);
    if (!m) continue;
    const name = m[4]!.split(" -> ")[0]!;
    if (name === "." || name === "..") continue;
    entries.push({ key: `${m[1]} ${m[2]} ${m[3]}`, name, full: m[4]! });
  }
  const seen = new Map<string, number>();
  for (const e of entries) seen.set(e.key, (seen.get(e.key) ?? 0) + 1);
  for (const e of entries) {
    total++;
    if (out === orig) {
      present++;
      modes++;
      continue;
    }
    const line = outLines.find((o) => o.endsWith(` ${e.full}`));
    if (line !== undefined || out.includes(e.name)) present++;
    if (line !== undefined && line.startsWith(`${e.key} `)) modes++;
    else if (line !== undefined) missing.push(`mode and owner of ${e.name}`);
    else if ((seen.get(e.key) ?? 0) <= 2) missing.push(`${e.name} (${e.key}, unlike most entries)`);
  }
  const elided = [...out.matchAll(/… (\d+) more entries elided/g)].reduce((a, m) => a + Number(m[1]), 0);
  if (present + elided < total) missing.push(`${total - present - elided} names neither kept nor counted as elided`);
  return { missing, kept: { names: [present, total], "modes and owners": [modes, total] } };
};

/** tree: the root line and the summary line. */
const checkTree: Check = (orig, out) => {
  const missing: string[] = [];
  const ls = lines(orig).filter(Boolean);
  const roots = ls.filter((l) => !/^[│├└ ]/.test(l) && !/^\d+ directories, \d+ files$/.test(l));
  const summaries = ls.filter((l) => /^\d+ directories, \d+ files$/.test(l));
  for (const l of [...roots, ...summaries]) if (!out.includes(l)) missing.push(l);
  const names = ls.filter((l) => /^[│├└ ]/.test(l)).map((l) => l.replace(/^[│├└─\s]+/, ""));
  return { missing, kept: { "root and summary lines": [roots.length + summaries.length - missing.length, roots.length + summaries.length], "entry names": [names.filter((n) => out.includes(n)).length, names.length] } };
};

/**
 * Lines of `orig` the output neither kept (as whole lines) nor counted in an elision marker
 * (`… 297 similar lines elided`, `… 198 warnings elided (594 lines)…`); 0 when left as it is.
 */
function uncounted(orig: string, out: string): number {
  if (out === orig) return 0;
  const have = new Set(lines(out));
  const keptN = lines(orig).filter((l) => l !== "" && have.has(l)).length;
  const stated = lines(out).reduce((a, l) => a + Number((/^\s*… ([\d,]+) similar lines? elided/.exec(l) ?? /^\s*… [\d,]+ warnings? elided \(([\d,]+) lines?\)/.exec(l))?.[1]?.replace(/,/g, "") ?? 0), 0);
  return Math.max(0, lines(orig).filter((l) => l !== "").length - keptN - stated);
}

/** How many of `wanted` (a line listed twice counts twice) the output holds as whole lines. */
function keptOf(wanted: string[], out: string): number {
  const have = new Map<string, number>();
  for (const l of lines(out)) have.set(l, (have.get(l) ?? 0) + 1);
  let n = 0;
  for (const l of wanted) {
    const c = have.get(l) ?? 0;
    if (c > 0) {
      n++;
      have.set(l, c - 1);
    }
  }
  return n;
}

/** Logs: every ERROR and FATAL line, the first and last WARN line, the last line; every line kept or counted. */
const checkLog: Check = (orig, out) => {
  const ls = lines(orig);
  const errors = ls.filter((l) => /\b(?:ERROR|FATAL)\b/.test(l));
  const warns = ls.filter((l) => /\bWARN\b/.test(l));
  const lastLine = ls.filter(Boolean).at(-1);
  const must = [...errors, warns[0], warns.at(-1), lastLine].filter((l): l is string => !!l);
  const missing = must.filter((l) => !lines(out).includes(l)).map((l) => `line ${l.slice(0, 80)}`);
  const lost = uncounted(orig, out);
  if (lost > 0) missing.push(`${lost} lines neither kept nor counted as elided`);
  return { missing, kept: { "error lines": [keptOf(errors, out), errors.length], "warning lines": [keptOf(warns, out), warns.length] } };
};

/**
 * Compiler output: every error line and the indented lines after it, every line that is not a
 * diagnostic's (the command, `make: *** … Error 1`), the first warning; every line kept verbatim or counted.
 */
const checkCompiler: Check = (orig, out) => {
  const ls = lines(orig).filter(Boolean);
  const diag = /^[^\s:][^:]*:\d+(?::\d+)?: (fatal error|error|warning|note)/;
  const have = new Set(lines(out));
  const errors: string[] = [];
  const build: string[] = [];
  let inError = false;
  for (const l of ls) {
    const d = diag.exec(l);
    if (d) inError = d[1] === "error" || d[1] === "fatal error" || (d[1] === "note" && inError);
    if (inError && (d || /^\s/.test(l))) errors.push(l);
    else if (!d && !/^\s/.test(l) && !/: In function|^In file included/.test(l)) build.push(l);
  }
  const warnings = ls.filter((l) => diag.exec(l)?.[1] === "warning");
  const missing = [...errors, ...build, warnings[0]].filter((l): l is string => !!l && !have.has(l)).map((l) => `line ${l.slice(0, 80)}`);
  const lost = uncounted(orig, out);
  if (lost > 0) missing.push(`${lost} lines neither kept nor counted as elided`);
  return {
    missing,
    kept: { "error lines (with context)": [keptOf(errors, out), errors.length], "build lines": [keptOf(build, out), build.length], warnings: [keptOf(warnings, out), warnings.length] },
  };
};

/** git log: every commit hash (usually left as it is: no rule recognises it). */
const checkGitLog: Check = (orig, out) => {
  const hashes = [...orig.matchAll(/^(?:commit )?([0-9a-f]{7,40})\b/gm)].map((m) => m[1]!);
  const missing = hashes.filter((h) => !out.includes(h)).map((h) => `commit ${h}`);
  return { missing, kept: { "commit hashes": [hashes.length - missing.length, hashes.length] } };
};

const CHECKS: Record<CorpusKind, Check> = {
  "git diff": checkDiff,
  "git status": checkStatus,
  "git log": checkGitLog,
  search: checkSearch,
  "ls -la": checkListing,
  tree: checkTree,
  log: checkLog,
  compiler: checkCompiler,
};

/** The median of a non-empty list. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Per-kind figures of a measured corpus. */
export interface KindSummary {
  kind: CorpusKind;
  outputs: number;
  shortened: number;
  /** Median saving over the kind's outputs, as a fraction of the original length (0 when left alone). */
  medianSaving: number;
  charsBefore: number;
  charsAfter: number;
  /** What was kept over all the kind's outputs, by what: [kept, of]. */
  kept: Record<string, [number, number]>;
}

/** Summarises measured items per kind, in corpus order. */
export function summarise(measured: Measured[]): KindSummary[] {
  const kinds = [...new Set(measured.map((m) => m.item.kind))];
  return kinds.map((kind) => {
    const ms = measured.filter((m) => m.item.kind === kind);
    return {
      kind,
      outputs: ms.length,
      shortened: ms.filter((m) => m.rule).length,
      medianSaving: median(ms.map((m) => 1 - m.after / m.before)),
      charsBefore: ms.reduce((a, m) => a + m.before, 0),
      charsAfter: ms.reduce((a, m) => a + m.after, 0),
      kept: ms.reduce<Record<string, [number, number]>>((acc, m) => {
        for (const [k, [a, b]] of Object.entries(m.kept)) acc[k] = [(acc[k]?.[0] ?? 0) + a, (acc[k]?.[1] ?? 0) + b];
        return acc;
      }, {}),
    };
  });
}

/** Length of the longest common prefix of two strings. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** One arm of the conversation simulation. */
export interface ConversationArm {
  /** Turn transitions whose upstream bytes kept all of the previous turn's conversation as a prefix. */
  cacheHits: number;
  transitions: number;
  /** Bytes of all upstream bodies. */
  bytesSent: number;
  /** Bytes after the common prefix with the previous turn (what a prefix cache cannot serve), summed. */
  uncachedBytes: number;
}

/**
 * A multi-turn conversation of a Chat client through a real gateway to a fake OpenAI-compatible
 * upstream: turn k adds an assistant tool call and the k-th tool output (and, every third turn, an
 * output seen before, as an agent re-running a command). Each turn is sent with the savers and with
 * `X-Switchyard-Token-Saver: off`; turn N → N+1 is a cache hit when the common byte prefix of the two
 * upstream bodies reaches past turn N's last message.
 */
export async function simulateConversation(outputs: string[], turns: number): Promise<{ savers: ConversationArm; off: ConversationArm }> {
  const gw = await startGateway(`
providers:
  - id: glm
    kind: openai-compatible
    base_url: "{{FAKE}}/v1"
accounts:
  - { id: glm-1, provider: glm, api_key: "env:FAKE_KEY" }
`);
  try {
    const messages: unknown[] = [
      { role: "system", content: "You are a coding agent working in this repository." },
      { role: "user", content: "Find out why the worker does not start and what the last commits changed." },
    ];
    const arms = { savers: [] as Array<{ raw: string; msgs: unknown[] }>, off: [] as Array<{ raw: string; msgs: unknown[] }> };
    for (let k = 0; k < turns; k++) {
      const output = k % 3 === 2 ? outputs[(k - 2) % outputs.length]! : outputs[k % outputs.length]!;
      messages.push(
        { role: "assistant", content: null, tool_calls: [{ id: `call_${k}`, type: "function", function: { name: "sh", arguments: JSON.stringify({ step: k }) } }] },
        { role: "tool", tool_call_id: `call_${k}`, content: output },
      );
      for (const arm of ["savers", "off"] as const) {
        const before = gw.fake.requests.length;
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(arm === "off" ? { "x-switchyard-token-saver": "off" } : {}) },
          body: JSON.stringify({ model: "glm/glm-5", messages }),
        });
        await res.text();
        if (res.status !== 200) throw new Error(`turn ${k} (${arm}): HTTP ${res.status}`);
        const got = gw.fake.requests.slice(before).find((r) => r.method === "POST")!;
        arms[arm].push({ raw: got.raw, msgs: got.body.messages });
      }
    }
    const score = (seq: Array<{ raw: string; msgs: unknown[] }>): ConversationArm => {
      let cacheHits = 0;
      let uncachedBytes = seq[0] ? seq[0].raw.length : 0;
      for (let i = 1; i < seq.length; i++) {
        const prev = seq[i - 1]!;
        const next = seq[i]!;
        const items = JSON.stringify(prev.msgs);
        const end = prev.raw.indexOf(items) + items.length - 1;
        const lcp = commonPrefix(prev.raw, next.raw);
        if (prev.raw.indexOf(items) > 0 && lcp >= end) cacheHits++;
        uncachedBytes += next.raw.length - lcp;
      }
      return { cacheHits, transitions: Math.max(0, seq.length - 1), bytesSent: seq.reduce((a, s) => a + s.raw.length, 0), uncachedBytes };
    };
    return { savers: score(arms.savers), off: score(arms.off) };
  } finally {
    await gw.stop();
  }
}
