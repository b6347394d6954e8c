/**
 * Tool-result compression rules (SPEC S-1, pipeline/savers/) on real command output: each rule makes
 * its output shorter, keeps what an agent needs (file names, changed lines, error lines), says what it
 * elided, never makes a result longer, and is deterministic.
 */
import { describe, expect, test } from "bun:test";
import { compressToolResult, envelope, MIN_CHARS, type Compressed } from "../../pipeline/savers/index.ts";
import { errorLine } from "../../pipeline/savers/log.ts";
import { bigGitStatus, prose, sample, serverLog, sourceWithTable } from "./save-tokens-fixtures/samples.ts";

/** Compresses and checks the properties every rule shares. */
function squeeze(text: string, rule: Compressed["rule"]): string {
  const c = compressToolResult(text);
  expect(c).toBeDefined();
  expect(c!.rule).toBe(rule);
  expect(c!.text.length).toBeLessThan(text.length);
  // Deterministic: the same text gives the same bytes, every time.
  expect(compressToolResult(text)!.text).toBe(c!.text);
  // It says what it did.
  expect(c!.text).toMatch(/\[switchyard: [^\]]+ shortened; elided: [^\]]+\]/);
  return c!.text;
}

const linesOf = (t: string) => t.split("\n");

describe("unified diff (git show of a real commit)", () => {
  const diff = sample("git-diff.txt");
  const out = squeeze(diff, "diff");

  test("every file header, hunk header and changed line is kept", () => {
    const kept = new Set(linesOf(out));
    for (const l of linesOf(diff)) {
      if (/^(diff --git|--- |\+\+\+ |@@ )/.test(l)) expect(kept.has(l)).toBe(true);
      if (/^[+-]/.test(l)) expect(kept.has(l)).toBe(true);
    }
    expect(out).toContain("diff --git a/pipeline/translate.ts b/pipeline/translate.ts");
  });

  test("index lines and far context go, each change keeps one line of context, the note counts them", () => {
    expect(out).not.toMatch(/^index [0-9a-f]+\.\.[0-9a-f]+/m);
    expect(out).toMatch(/\[switchyard: diff shortened; elided: \d+ unchanged context lines, 7 index lines\]/);
    expect(out).toMatch(/^… \d+ unchanged lines elided$/m);
    // The line right before the first change of a hunk is still there.
    expect(out).toContain(" /** Providers that only answer with a stream (SPEC F-9, P-2). */");
    expect(out.length).toBeLessThan(diff.length * 0.8);
  });

  test("a generated file's thousands of added lines keep their head and tail", () => {
    const lock = ["diff --git a/bun.lock b/bun.lock", "new file mode 100644", "index 0000000..3f2a9c1", "--- /dev/null", "+++ b/bun.lock", "@@ -0,0 +1,2000 @@"];
    for (let i = 0; i < 2000; i++) lock.push(`+    "pkg-${i}": ["pkg-${i}@1.0.${i}", "", {}, "sha512-${"x".repeat(40)}"],`);
    const text = lock.join("\n") + "\n";
    const o = squeeze(text, "diff");
    expect(o).toContain('+    "pkg-0": ');
    expect(o).toContain('+    "pkg-1999": ');
    expect(o).toContain("… 1,960 added lines elided");
    expect(o.length).toBeLessThan(text.length / 20);
  });
});

describe("git status", () => {
  test("real long-form status: hints go, every path and section stays", () => {
    const status = sample("git-status.txt");
    const out = squeeze(status, "git_status");
    expect(out).not.toContain('(use "git');
    for (const path of ["formats/sse.ts", "formats/streams.ts -> formats/stream-utils.ts", "pipeline/guard.ts", "src/app.ts", "README.md", "formats/hub.ts", "pipeline/order.ts", "notes/", "scratch.ts"]) {
      expect(out).toContain(path);
    }
    for (const s of ["On branch main", "Changes to be committed:", "Changes not staged for commit:", "Untracked files:"]) expect(out).toContain(s);
    expect(out).toContain("\tmodified: pipeline/guard.ts");
    expect(out).toContain("elided: 4 git hint lines");
  });

  test("150 untracked files: the first 40 by name, the rest counted by directory", () => {
    const status = bigGitStatus();
    const out = squeeze(status, "git_status");
    expect(out).toContain("\tmodified: pipeline/save-tokens.ts");
    expect(out).toContain("gen/protos/service_039.pb.ts");
    expect(out).not.toContain("gen/protos/service_040.pb.ts");
    expect(out).toContain("\t… 110 more entries elided: gen/ 80, docs/ 30");
    expect(out).toContain("nothing added to commit but untracked files present");
    expect(out.length).toBeLessThan(status.length / 2);
  });

  test("short form (git status -s) with many entries", () => {
    const lines = ["## main...origin/main [ahead 1]"];
    for (let i = 0; i < 80; i++) lines.push(`?? build/out/chunk-${i}.js`);
    lines.push(" M src/app.ts");
    const text = lines.join("\n") + "\n";
    const out = squeeze(text, "git_status");
    expect(out).toContain("## main...origin/main [ahead 1]");
    expect(out).toContain("… 41 more entries elided: build/ 40, src/ 1");
  });
});

describe("search results", () => {
  test("real rg -n output: grouped by file, every file and line number kept", () => {
    const rg = sample("rg.txt");
    const out = squeeze(rg, "search");
    const files = new Set(linesOf(rg).filter(Boolean).map((l) => l.slice(0, l.indexOf(":"))));
    for (const f of files) expect(out).toContain(f);
    for (const l of linesOf(rg).filter(Boolean)) {
      const [, path, line] = /^([^:]+):(\d+):/.exec(l)!;
      expect(out.includes(`${path}:${line}:`) || out.includes(`\n  ${line}:`)).toBe(true);
    }
    expect(out).toMatch(/^pipeline\/save-tokens\.ts:$/m);
    expect(out).toMatch(/elided: repeated paths \(\d+ matches in \d+ files, grouped by file\)/);
  });

  test("rg -n -C1: context lines stay with their file", () => {
    const rg = sample("rg-context.txt");
    const out = squeeze(rg, "search");
    expect(out).toContain("pipeline/gateway.ts:\n");
    expect(out).toMatch(/^ {2}63:deps\.finish\(ctx, \{ outcome: ctx\.probe/m);
    expect(out).toMatch(/^ {2}62-\/\/ A probe answered locally/m);
  });

  test("a file with hundreds of hits keeps the first 25 and counts the rest", () => {
    const lines: string[] = [];
    for (let i = 1; i <= 300; i++) lines.push(`src/generated/messages_pb.ts:${i * 3}:  public getField${i}(): string { return this.f${i}; }`);
    lines.push("src/app.ts:12:import { Messages } from './generated/messages_pb';");
    const text = lines.join("\n");
    const out = squeeze(text, "search");
    expect(out).toContain("  75:public getField25()");
    expect(out).not.toContain("getField26()");
    expect(out).toContain("  … 275 more lines elided");
    expect(out).toContain("src/app.ts:12:import { Messages }");
  });
});

/**
 * An `ls -la` of `n` certificates owned by app, the `odd`th root-owned and mode 600 (tryout7's listing
 * had forty, cert-17 the odd one).
 */
const certs = (n: number, odd: number) =>
  [
    `total ${n * 12}`,
    "drwxr-xr-x  2 app  app   4096 Dec  7 01:00 .",
    "drwxr-xr-x 10 app  app   4096 Dec  7 01:00 ..",
    ...Array.from({ length: n }, (_, i) => {
      const [mode, who] = i === odd ? ["-rw-------", "root root"] : ["-rw-r--r--", "app  app "];
      return `${mode}  1 ${who}  ${String(1000 + i * 37).padStart(5)} Dec  ${1 + (i % 6)} ${String(i % 10).padStart(2, "0")}:1${i % 6} cert-${String(i).padStart(2, "0")}.pem`;
    }),
  ].join("\n");

describe("directory listing (ls -l, ls -la)", () => {

  test("permissions, owners and dates are kept: the tryout's 40-entry listing saves under 10 % without its padding, so it is left as it is (tryout7)", () => {
    const text = certs(40, 17);
    expect(text).toContain("-rw-------  1 root root   1629 Dec  6 07:15 cert-17.pem");
    expect(compressToolResult(text)).toBeUndefined();
  });

  test("a real ls -la of node_modules is left as it is (nothing but padding and link counts to drop)", () => {
    expect(compressToolResult(sample("ls-la.txt"))).toBeUndefined();
  });

  test("past 300 entries: the first 200 and every entry with another mode or owner stay whole, the rest counted by mode and owner", () => {
    const text = certs(400, 317);
    const out = squeeze(text, "listing");
    const lines = linesOf(out);
    // Kept lines keep every column but the link count; only padding is gone.
    expect(lines).toContain("-rw-r--r-- app app 1000 Dec 1 00:10 cert-00.pem");
    expect(lines).toContain("drwxr-xr-x app app 4096 Dec 7 01:00 .");
    // The first 200 entries (with . and ..), then only the odd one.
    expect(lines).toContain("-rw-r--r-- app app 8289 Dec 6 07:15 cert-197.pem");
    expect(out).not.toContain("cert-198.pem");
    expect(lines).toContain("-rw------- root root 12729 Dec 6 07:15 cert-317.pem");
    expect(out).toContain("… 201 more entries elided (201 -rw-r--r-- app app)");
    expect(out).toContain("[switchyard: directory listing shortened; elided: link counts and column padding of 402 entries, 1 total line, 201 entries past the first 200 of a directory with the mode and owner most of it has]");
    expect(out.length).toBeLessThan(text.length / 2);
  });

  test("names (symlinks with their target, names with spaces) are kept byte for byte; devices keep their numbers", () => {
    const many = Array.from({ length: 330 }, (_, i) => `-rw-r--r--  1 dev  staff  ${String(100 + i).padStart(5)} Nov 30 07:41 notes ${i}.md`);
    const text = [
      "lrwxrwxrwx  1 dev  staff     14 Nov 30 07:41 latest -> releases/v1.4.2",
      "crw-rw----+ 1 root video  226,   0 Nov 30 07:40 card0",
      "-rwsr-xr-x  1 root root   55672 Nov 30 07:40 sudo",
      ...many,
    ].join("\n");
    const lines = linesOf(squeeze(text, "listing"));
    expect(lines).toContain("lrwxrwxrwx dev staff 14 Nov 30 07:41 latest -> releases/v1.4.2");
    expect(lines).toContain("crw-rw----+ root video 226, 0 Nov 30 07:40 card0");
    expect(lines).toContain("-rwsr-xr-x root root 55672 Nov 30 07:40 sudo");
    expect(lines).toContain("-rw-r--r-- dev staff 100 Nov 30 07:41 notes 0.md");
  });
});

describe("tree", () => {
  test("real tree output: guides become indentation; every name and the summary stay", () => {
    const tree = sample("tree.txt");
    const out = squeeze(tree, "tree");
    for (const l of linesOf(tree)) {
      const name = l.replace(/^[│├└─\s\u00a0]+/, "");
      if (name) expect(out).toContain(name);
    }
    expect(out).not.toMatch(/[│├└]/);
    expect(out).toContain("\n  anthropic-messages\n    decoder.ts\n");
    expect(out).toContain("10 directories, 76 files");
  });

  test("a directory with hundreds of entries keeps the first 40 and counts the rest", () => {
    const tree = sample("tree-large.txt");
    const out = squeeze(tree, "tree");
    expect(out).toContain("node_modules/effect");
    expect(out).toMatch(/… \d+ more entries elided \(\d+ non-empty directories, \d+ lines in all\)/);
    expect(out).toContain("183 directories, 355 files");
    expect(out.length).toBeLessThan(tree.length / 2);
  });
});

describe("logs with repeated lines", () => {
  const log = serverLog(1000);
  const out = squeeze(log, "log");

  test("1,000 retry warnings become the first two, a count and the last one", () => {
    expect(out).toContain("retry 1/1000 in 150ms");
    expect(out).toContain("retry 2/1000 in 200ms");
    expect(out).toContain("… 997 similar lines elided");
    expect(out).toContain("retry 1000/1000 in");
    expect(out).not.toContain("retry 500/1000");
    expect(out.length).toBeLessThan(log.length / 50);
  });

  test("error lines, stack frames and the lines around the run are all kept", () => {
    for (const l of linesOf(log).filter((l) => !l.includes(" WARN "))) expect(out).toContain(l);
    expect(out).toContain("[switchyard: log shortened; elided: 997 similar lines in 1 run]");
  });

  test("a retry loop of two alternating lines is collapsed by block", () => {
    const lines: string[] = [];
    for (let i = 1; i <= 60; i++) lines.push(`[worker-2] attempt ${i} failed: 503 Service Unavailable`, `[worker-2] retrying in ${i * 2}s`);
    lines.push("[worker-2] FATAL: upstream never recovered");
    const text = lines.join("\n");
    const o = squeeze(text, "log");
    expect(o).toContain("attempt 1 failed");
    expect(o).toContain("attempt 60 failed");
    expect(o).toContain("… 116 similar lines elided (the 2-line block above, 58 more times)");
    expect(o).toContain("FATAL: upstream never recovered");
  });

  // A tryout's upload log (tryout7): twelve ERROR lines, each naming a different shard, used to become
  // the first two, `… 9 similar lines elided` and the last: the agent could not tell which shards failed.
  const shards = [3, 7, 8, 11, 15, 19, 23, 27, 31, 40, 41, 55];
  const uploadErrors = (filler: number) =>
    [
      "2026-12-07T02:00:00Z INFO  upload job started (12 shards)",
      ...shards.flatMap((n, k) => [
        ...Array.from({ length: filler }, (_, j) => `2026-12-07T02:00:${String(k * 4 + (j % 4)).padStart(2, "0")}Z INFO  shard ${n * 10 + j} uploaded in ${40 + j}ms`),
        `2026-12-07T02:00:${String(n).padStart(2, "0")}Z ERROR failed to upload shard ${n} to s3://bkt/part-${String(n).padStart(4, "0")}.parquet: timeout after 30000ms`,
      ]),
      "2026-12-07T02:01:00Z INFO  upload job finished: 12 failed",
    ].join("\n");

  test("distinct error lines are never elided: twelve ERROR lines for twelve shards all stay (tryout7)", () => {
    const text = uploadErrors(0);
    // Nothing but distinct errors between two lines: nothing to shorten, the result stays as it is.
    expect(compressToolResult(text)).toBeUndefined();
    // With repeated INFO lines between them, those collapse and every ERROR line stays.
    const long = uploadErrors(8);
    const o = squeeze(long, "log");
    const errors = linesOf(long).filter((l) => l.includes(" ERROR "));
    expect(errors).toHaveLength(12);
    for (const l of errors) expect(linesOf(o)).toContain(l);
    expect(o).toContain("upload job finished: 12 failed");
  });

  test("what reads as an error line: level words in capitals, `error:`/`fatal:`/`panic:` in any case, exceptions, tracebacks", () => {
    for (const l of [
      "2026-12-07 ERROR boom",
      "[worker] FATAL: giving up",
      "npm ERR! code ELIFECYCLE",
      "[041] FAIL test/unit/parse-41.test.ts",
      "--- FAILED test_upload",
      "E1207 02:00:00 PANIC raft",
      "error: could not compile `app`",
      "error[E0308]: mismatched types",
      "fatal: not a git repository",
      "panic: runtime error: index out of range",
      "Uncaught TypeError: x is undefined",
      'Exception in thread "main" java.lang.NullPointerException',
      "Traceback (most recent call last):",
      // levels as a field or a tag, any case (review of the rule: each collapsed as similar lines)
      '2026-12-07T03:00:01Z level=error msg="shard 1 unreachable"',
      'time=2026-12-07T03:00:01Z level=FATAL msg="giving up"',
      '{"level":"error","ts":1765076401,"msg":"shard 1 unreachable"}',
      "2026/12/07 03:00:01 [error] 1234#0: *1 connect() failed (111: Connection refused) while connecting to upstream",
      "[Sun Dec 07 03:00:01 2026] [crit] server reached MaxRequestWorkers",
      "E1207 03:00:01.123456    1234 shard.go:42] shard 1 unreachable",
      "F1207 03:00:01.123456    1234 main.go:10] cannot start",
    ])
      expect([l, errorLine(l)]).toEqual([l, true]);
    for (const l of [
      "2026-12-07 WARN  db: connect to 127.0.0.1:5432 failed (ECONNREFUSED), retry 3/10",
      "[worker-2] attempt 4 failed: 503 Service Unavailable",
      "INFO  0 errors, 2 warnings",
      "INFO  request 10 took 22ms",
      '2026-12-07T03:00:01Z level=info msg="error budget 0.1%"',
      '{"level":"info","msg":"retrying"}',
      "I1207 03:00:01.123456    1234 shard.go:42] shard 1 ready",
      "2026/12/07 03:00:01 [notice] 1#1: start worker processes",
      'level=info severity=critical_path msg="scheduled"',
    ])
      expect([l, errorLine(l)]).toEqual([l, false]);
  });

  test("twelve error lines in logfmt, glog and nginx form, one per shard, all stay", () => {
    for (const line of [
      (n: number) => `2026-12-07T03:00:${String(n).padStart(2, "0")}Z level=error msg="shard ${n} unreachable"`,
      (n: number) => `E1207 03:00:${String(n).padStart(2, "0")}.123456    1234 shard.go:42] shard ${n} unreachable`,
      (n: number) => `2026/12/07 03:00:${String(n).padStart(2, "0")} [error] 1234#0: *${n} connect() failed (111: Connection refused) while connecting to upstream shard-${n}`,
    ]) {
      const errors = Array.from({ length: 12 }, (_, i) => line(i + 1));
      const text = [...Array.from({ length: 30 }, (_, i) => `2026-12-07T02:59:${String(i).padStart(2, "0")}Z INFO  tick ${i}`), ...errors, "INFO  done"].join("\n");
      const o = squeeze(text, "log");
      for (const l of errors) expect(linesOf(o)).toContain(l);
    }
  });

  test("an error line repeated byte for byte is collapsed with its count; the same error at other times is not", () => {
    const same = Array.from({ length: 40 }, () => "ERROR db: connection refused").join("\n") + "\nINFO  gave up";
    const o = squeeze(same, "log");
    expect(o).toContain("ERROR db: connection refused\nERROR db: connection refused\n… 37 similar lines elided\nERROR db: connection refused\nINFO  gave up");
    const timed = Array.from({ length: 40 }, (_, i) => `2026-12-07T02:00:${String(i).padStart(2, "0")}Z ERROR db: connection refused`).join("\n");
    expect(compressToolResult(timed)).toBeUndefined();
  });
});

describe("left alone", () => {
  test("short results (under 500 characters) are never touched", () => {
    const short = sample("git-status.txt").slice(0, MIN_CHARS - 1);
    expect(compressToolResult(short)).toBeUndefined();
  });

  test("unrecognised content: prose, JSON, source code with a table of similar lines, a numbered file read", () => {
    expect(compressToolResult(prose())).toBeUndefined();
    expect(compressToolResult(JSON.stringify({ items: Array.from({ length: 40 }, (_, i) => ({ id: i, name: `item ${i}` })) }, null, 2))).toBeUndefined();
    expect(compressToolResult(sourceWithTable())).toBeUndefined();
    const numbered = sourceWithTable()
      .split("\n")
      .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
      .join("\n");
    expect(compressToolResult(numbered)).toBeUndefined();
  });

  test("never longer: every prefix of every sample compresses to something shorter, or not at all", () => {
    const texts = ["git-diff.txt", "git-status.txt", "rg.txt", "rg-context.txt", "ls-la.txt", "tree.txt", "tree-large.txt"].map(sample);
    texts.push(serverLog(20), bigGitStatus(), sourceWithTable(), prose());
    for (const t of texts) {
      for (let cut = MIN_CHARS; cut < t.length; cut += 97) {
        const piece = t.slice(0, cut);
        const c = compressToolResult(piece);
        if (c) expect(c.text.length).toBeLessThanOrEqual(piece.length * 0.9);
      }
    }
  });
});

describe("client wrappers are kept byte for byte", () => {
  test("Codex exec header: only the output after `Output:` is compressed", () => {
    const header = "Chunk ID: 26f61c\nWall time: 4.1020 seconds\nProcess exited with code 0\nOriginal token count: 9120\nOutput:\n";
    const text = header + sample("git-diff.txt");
    expect(envelope(text).head).toBe(header);
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("diff");
    expect(c.text.startsWith(header + "diff --git a/formats/codec.ts")).toBe(true);
  });

  test("Codex's own cut of a long ls -la (its Warning / Total output lines header and the `…N chars truncated…` line joined across the cut) is still a listing: the cut line kept as it is (newuser13 J12)", () => {
    const header = "Chunk ID: 9a1f02\nWall time: 0.0412 seconds\nProcess exited with code 0\nOriginal token count: 21973\nOutput:\nWarning: truncated output (original token count: 21973)\nTotal output lines: 1133\n\n";
    const lines = certs(400, 317).split("\n");
    // cut inside the date, as in the tryout: `lrwxrwxrwx  1 root root        14 Jan  …77892 chars truncated…bxmlsec1-gcrypt.a`
    const joined = `${lines[40]!.slice(0, lines[40]!.indexOf("Dec ") + 5)}…77892 chars truncated…${lines[60]!.slice(45)}`;
    const output = [...lines.slice(0, 40), joined, ...lines.slice(61)].join("\n");
    const text = header + output;
    expect(envelope(text).head).toBe(header);
    const c = compressToolResult(text)!;
    expect(c?.rule).toBe("listing");
    expect(c.text.startsWith(header)).toBe(true);
    expect(c.text.split("\n")).toContain(joined);
    expect(c.text.length).toBeLessThan(text.length * 0.9);
  });

  test("Claude Code's trailing <system-reminder> stays at the end, unchanged", () => {
    const reminder = "\n\n<system-reminder>\n<total_tokens>14999968 tokens left</total_tokens>\n</system-reminder>";
    const text = serverLog(100) + reminder;
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("log");
    expect(c.text.endsWith("similar lines in 1 run]\n" + reminder)).toBe(true);
  });

  test("Gemini CLI's shell result: `<untrusted_context>` and `Output: ` before, its Exit Code / PGID lines and the closing tag after, kept (newuser13 J3)", () => {
    const head = "<untrusted_context>\nOutput: ";
    const tail = "\nExit Code: 2\nProcess Group PGID: 48213\n</untrusted_context>";
    const listing = certs(400, 317);
    const text = head + listing + tail;
    expect(envelope(text)).toEqual({ head, body: listing, tail });
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("listing");
    expect(c.text.startsWith(head + "drwxr-xr-x app app 4096 Dec 7 01:00 .\n")).toBe(true);
    expect(c.text.endsWith("directory listing shortened; elided: " + c.text.split("directory listing shortened; elided: ")[1]!.split("]")[0] + "]" + tail)).toBe(true);
    expect(c.text.length).toBeLessThan(text.length * 0.9);
    // without the wrapper's tail lines, and an output that is not a listing, nothing changes
    expect(envelope("Output: " + listing).tail).toBe("");
    expect(compressToolResult(head + "x".repeat(5000) + tail)).toBeUndefined();
  });

  test("tails are found in one pass: many reminder blocks followed by other text, thousands of Gemini `Error:` lines (review R5, R1: seconds of backtracking blocked the gateway)", () => {
    // Not a speed target: the old tail regexes took 3.5–9 s (reminders) and 0.8 s (Gemini) on these
    // texts, blocking every client; one pass takes well under a millisecond, so 1 s cannot be missed
    // by a loaded machine, only by backtracking coming back.
    const reminders = "log start\n" + "<system-reminder>a</system-reminder>\n".repeat(500) + "done";
    const errors = "Output: build\n" + "Error: module not found: ./x\n".repeat(8000) + "done\nExit Code: 1";
    const t0 = performance.now();
    expect(envelope(reminders)).toEqual({ head: "", body: reminders, tail: "" });
    const e = envelope(errors);
    const ms = performance.now() - t0;
    expect(e.head).toBe("Output: ");
    expect(e.tail).toBe("\nExit Code: 1");
    expect(ms).toBeLessThan(1000);
    // what they find: the reminders at the very end, with the blank lines before them; text between two
    // reminder blocks is output, not wrapper; each Gemini trailer kind once, in its order
    expect(envelope("out\n<system-reminder>a</system-reminder>\ntext\n\n<system-reminder>b</system-reminder>\n")).toEqual({
      head: "",
      body: "out\n<system-reminder>a</system-reminder>\ntext",
      tail: "\n\n<system-reminder>b</system-reminder>\n",
    });
    expect(envelope("Output: x\nError: boom\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>").tail).toBe("\nError: boom\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>");
    expect(envelope("Output: x\nError: a\nError: b").tail).toBe("\nError: b");
    // a text that only starts like Gemini CLI's keeps a Claude Code reminder tail
    expect(envelope("Output: x\n<system-reminder>r</system-reminder>").tail).toBe("\n<system-reminder>r</system-reminder>");
  });

  test("CRLF output is read as lines", () => {
    const c = compressToolResult(serverLog(50).replaceAll("\n", "\r\n"));
    expect(c?.rule).toBe("log");
    expect(c!.text).toContain("… 47 similar lines elided");
  });
});
