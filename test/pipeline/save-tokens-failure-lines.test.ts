/**
 * The token savers never lose the line that says why a command failed, and never rewrite a kept line
 * (SPEC S-1; try17 T1, T11): compiler output goes to the compiler rule (every error with its context,
 * repeated warnings counted), a log whose lines hold `host:port:` goes to the log rule (its error
 * lines kept), and search results keep, verbatim and where they were, every line that is not a match
 * and the column numbers.
 */
import { describe, expect, test } from "bun:test";
import { compressToolResult } from "../../pipeline/savers/index.ts";

/** Lines of a compressed text that are neither an elision marker nor the closing note. */
const kept = (out: string) => out.split("\n").filter((l) => l !== "" && !/^\s*… /.test(l) && !l.startsWith("[switchyard: "));
/** Lines the markers say are gone. */
const gone = (out: string) =>
  out
    .split("\n")
    .filter((l) => /^\s*… /.test(l))
    .reduce((a, l) => a + Number((/… (\d+) (?:similar|more) lines? elided/.exec(l) ?? /\((\d+) lines?\)/.exec(l))![1]), 0);
const nonEmpty = (t: string) => t.split("\n").filter((l) => l !== "").length;

/** gcc 12 under make, as it prints them: command, `In function`, warnings with source echo and carets, an error with a fix-it and a note. */
function gccBuild(): string {
  const lines = ["cc -Wall -Wextra -c src/engine.c -o engine.o", "src/engine.c: In function ‘step’:"];
  for (let i = 0; i < 40; i++) {
    lines.push(`src/engine.c:${100 - i}:7: warning: unused variable ‘tmp${i}’ [-Wunused-variable]`, `  ${100 - i} |   int tmp${i};`, "      |       ^~~~~");
  }
  lines.push(
    "src/engine.c:140:40: warning: comparison of integer expressions of different signedness: ‘unsigned int’ and ‘int’ [-Wsign-compare]",
    "  140 |   if (u < s) return 1;",
    "      |         ^",
    "src/engine.c:512:3: error: expected ‘;’ before ‘return’",
    "  511 |   x = f(1)",
    "      |           ^",
    "      |           ;",
    "  512 |   return x;",
    "      |   ~~~~~~",
    "src/engine.c:7:12: note: declared here",
    "    7 | static int f(int);",
    "      |            ^",
    "make: *** [Makefile:12: engine.o] Error 1",
  );
  return lines.join("\n") + "\n";
}

describe("compiler output", () => {
  test("gcc under make: the command, every error line with its echo and note, make's failure line kept verbatim; 38 warnings counted with their 114 lines", () => {
    const text = gccBuild();
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("compiler");
    const orig = text.split("\n");
    for (const l of kept(c.text)) expect(orig).toContain(l);
    for (const l of orig.slice(orig.indexOf("src/engine.c:512:3: error: expected ‘;’ before ‘return’"))) expect(c.text).toContain(l);
    expect(c.text).toContain("cc -Wall -Wextra -c src/engine.c -o engine.o\nsrc/engine.c: In function ‘step’:\n");
    expect(c.text).toContain("src/engine.c:100:7: warning: unused variable ‘tmp0’ [-Wunused-variable]\n  100 |   int tmp0;\n");
    expect(c.text).toContain("… 38 warnings elided (114 lines): 38 [-Wunused-variable], in src/engine.c\nsrc/engine.c:140:40: warning: comparison");
    expect(kept(c.text).length + gone(c.text)).toBe(nonEmpty(text));
    expect(c.text.endsWith("make: *** [Makefile:12: engine.o] Error 1\n[switchyard: compiler output shortened; elided: 38 warnings (114 lines) beyond the first 2 of each kind]\n")).toBe(true);
    expect(compressToolResult(text)!.text).toBe(c.text);
  });

  test("cargo build (rustc's format): every error block, cargo's `Compiling` and summary lines kept verbatim and in place; 38 repeated warnings counted with their lines", () => {
    const lines = ["   Compiling demo v0.1.0 (/tmp/demo)"];
    for (let i = 0; i < 40; i++) {
      lines.push(`warning: unused variable: \`x${i}\``, ` --> src/main.rs:${i + 2}:9`, "  |", `${i + 2} |     let x${i} = 5;`, `  |         ^^ help: if this is intentional, prefix it with an underscore: \`_x${i}\``);
      if (i === 0) lines.push("  |", "  = note: `#[warn(unused_variables)]` on by default");
      lines.push("");
    }
    const error = ["error[E0308]: mismatched types", "  --> src/main.rs:50:18", "   |", '50 |     let y: i32 = "a";', "   |            ---   ^^^ expected `i32`, found `&str`", "   |            |", "   |            expected due to this", ""];
    const tail = ["For more information about this error, try `rustc --explain E0308`.", 'warning: `demo` (bin "demo") generated 40 warnings', 'error: could not compile `demo` (bin "demo") due to 1 previous error; 40 warnings emitted'];
    const text = [...lines, ...error, ...tail].join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("compiler");
    const orig = text.split("\n");
    for (const l of kept(c.text)) expect(orig).toContain(l);
    // The first two warnings whole (the first with its lint note), then one marker for the other 38
    // (5 lines each with their blank line), then the error block and cargo's lines, all verbatim.
    expect(c.text.startsWith(lines.slice(0, 15).join("\n") + "\n… 38 warnings elided (228 lines): 38 unused variable: '…', in src/main.rs\n")).toBe(true);
    expect(c.text).toContain([...error, ...tail].join("\n") + "\n[switchyard: compiler output shortened; elided: 38 warnings (228 lines) beyond the first 2 of each kind]\n");
    expect(compressToolResult(text)!.text).toBe(c.text);
  });

  test("rustc's own lines without a location (`warning: ... generated N warnings`, `error: aborting ...`) are no diagnostics: four located warnings are too few, left as they are", () => {
    const lines = ["   Compiling demo v0.1.0 (/tmp/demo)"];
    for (let i = 0; i < 4; i++) lines.push(`warning: unused variable: \`x${i}\``, ` --> src/main.rs:${i + 2}:9`, "  |", `${i + 2} |     let x${i} = 5;`, "  |         ^^", "");
    for (let i = 0; i < 30; i++) lines.push(`warning: \`demo${i}\` (lib) generated 4 warnings`, `error: aborting due to ${i} previous errors`);
    expect(compressToolResult(lines.join("\n"))?.rule).not.toBe("compiler");
  });

  test("automake under make: every `  CC` line, every `In function` line, the error with its echo and make's line kept verbatim and in place", () => {
    const lines: string[] = [];
    for (let f = 0; f < 3; f++) {
      lines.push(`  CC       src/mod${f}.o`, `src/mod${f}.c: In function ‘run${f}’:`);
      for (let i = 0; i < 6; i++) lines.push(`src/mod${f}.c:${10 + i}:7: warning: unused variable ‘t${i}’ [-Wunused-variable]`, `   ${10 + i} |   int t${i};`, "      |       ^~");
    }
    lines.push("src/mod2.c:90:3: error: ‘undefined_thing’ undeclared (first use in this function)", "   90 |   undefined_thing = 1;", "      |   ^~~~~~~~~~~~~~~", "make[1]: *** [Makefile:500: src/mod2.o] Error 1");
    const text = lines.join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("compiler");
    for (const l of kept(c.text)) expect(lines).toContain(l);
    expect(c.text).toContain("\n  CC       src/mod1.o\nsrc/mod1.c: In function ‘run1’:\n… 6 warnings elided (18 lines): 6 [-Wunused-variable], in src/mod1.c\n");
    expect(c.text).toContain(
      "\n  CC       src/mod2.o\nsrc/mod2.c: In function ‘run2’:\n… 6 warnings elided (18 lines): 6 [-Wunused-variable], in src/mod2.c\nsrc/mod2.c:90:3: error: ‘undefined_thing’ undeclared (first use in this function)\n   90 |   undefined_thing = 1;\n      |   ^~~~~~~~~~~~~~~\nmake[1]: *** [Makefile:500: src/mod2.o] Error 1\n",
    );
    for (const l of lines.filter((l) => l.startsWith("  CC ") || l.includes(": In function "))) expect(`\n${c.text}`).toContain(`\n${l}\n`);
    expect(kept(c.text).length + gone(c.text)).toBe(nonEmpty(text));
  });

  test("`In file included from …` before a note: kept verbatim with the warning it explains, even a fourth of its kind", () => {
    const lines: string[] = [];
    for (let i = 0; i < 6; i++) {
      lines.push(`src/a.c:${10 + i}:5: warning: passing argument 1 of ‘g’ makes pointer from integer without a cast [-Wint-conversion]`, `   ${10 + i} |   g(${i});`, "      |     ^");
      if (i === 3) lines.push("In file included from src/a.c:1:", "src/a.h:3:15: note: expected ‘char *’ but argument is of type ‘int’", "    3 | void g(char *s);", "      |        ~~~~~~^");
    }
    lines.push("make: *** [Makefile:4: a.o] Error 1");
    const text = lines.join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("compiler");
    expect(c.text).toContain("\n   13 |   g(3);\n      |     ^\nIn file included from src/a.c:1:\nsrc/a.h:3:15: note: expected ‘char *’");
    expect(kept(c.text).length + gone(c.text)).toBe(nonEmpty(text));
  });

  test("clang's source echo (no `|`) and caret lines stay with their warning and are counted with it", () => {
    const lines: string[] = [];
    for (let i = 0; i < 20; i++) lines.push(`src/a.c:${10 + i}:7: warning: unused variable 'v${i}' [-Wunused-variable]`, `  int v${i};`, "      ^");
    lines.push("20 warnings generated.");
    const c = compressToolResult(lines.join("\n") + "\n")!;
    expect(c.rule).toBe("compiler");
    expect(c.text).toContain("  int v1;\n      ^\n… 18 warnings elided (54 lines): 18 [-Wunused-variable], in src/a.c\n20 warnings generated.\n");
  });

  test("a build log with a few warnings (400 `Compiling` lines, 6 warnings, an ERROR line) is the log rule's: shortened, the ERROR line kept", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `[12:00:${String(i % 60).padStart(2, "0")}] Compiling module${i}.c`);
    for (let i = 0; i < 6; i++) lines.push(`src/m.c:${10 + i}:7: warning: unused variable ‘t${i}’ [-Wunused-variable]`);
    lines.push("[12:01:00] ERROR build failed");
    const text = lines.join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c?.rule).toBe("log");
    expect(c.text.length).toBeLessThan(1000);
    expect(c.text).toContain("\n[12:01:00] ERROR build failed\n");
    expect(kept(c.text).length + gone(c.text)).toBe(nonEmpty(text));
  });

  test("diagnostics with nothing to collapse (12 kinds of warning) are not taken for search results either: left as they are, make's line included", () => {
    const kinds = ["unused-variable", "sign-compare", "unused-parameter", "shadow", "cast-qual", "format", "return-type", "switch", "parentheses", "pointer-sign", "uninitialized", "empty-body"];
    const text = kinds.map((k, i) => `src/net/socket_io.c:${10 + i}:9: warning: something about this line of code, kind ${k} [-W${k}]`).join("\n") + "\nsrc/net/socket_io.c:88:1: error: expected declaration\nmake: *** [Makefile:3: socket_io.o] Error 1\n";
    expect(text.length).toBeGreaterThan(500);
    expect(compressToolResult(text)).toBeUndefined();
  });
});

describe("logs with host:port: lines are logs, not search results", () => {
  test("Go's log of dial errors (`2026/12/05 19:00:00 dial tcp 127.0.0.1:5432: connect: …`): the log rule, the last line kept", () => {
    const lines = Array.from({ length: 120 }, (_, i) => `2026/12/05 19:00:${String(i % 60).padStart(2, "0")} dial tcp 127.0.0.1:5432: connect: connection refused`);
    lines.push("2026/12/05 19:02:00 fatal: database unreachable after 120 attempts");
    const text = lines.join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("log");
    expect(c.text).toContain("\n2026/12/05 19:02:00 fatal: database unreachable after 120 attempts\n");
    for (const l of kept(c.text)) expect(lines).toContain(l);
    expect(kept(c.text).length + gone(c.text)).toBe(121);
  });

  test("`db.example.com:443:` at the start of every line (the same \"line\" again and again): not a search; the FATAL line kept", () => {
    const lines = [...Array(200).fill("db.example.com:443: connection reset by peer"), "FATAL: giving up"];
    const c = compressToolResult(lines.join("\n"))!;
    expect(c.rule).toBe("log");
    expect(c.text).toContain("\nFATAL: giving up\n");
    expect(kept(c.text).length + gone(c.text)).toBe(201);
  });
});

describe("search results keep what is not a match", () => {
  test("grep -rn with grep's own error and a last line: both kept verbatim and in place; every file and line number kept", () => {
    const lines: string[] = [];
    for (let f = 0; f < 4; f++) for (let i = 1; i <= 30; i++) lines.push(`src/mod${f}/handler.ts:${i * 4}:    const value${i} = await fetchValue(ctx, ${i});`);
    lines.splice(60, 0, "grep: src/mod1/.cache: Permission denied");
    lines.push("Error: search stopped: too many open files");
    const text = lines.join("\n") + "\n";
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("search");
    expect(c.text).toContain("\ngrep: src/mod1/.cache: Permission denied\nsrc/mod2/handler.ts:\n");
    expect(c.text).toContain("\nError: search stopped: too many open files\n[switchyard: search results shortened;");
    expect(c.text).toContain("  4:const value1 = await fetchValue(ctx, 1);");
    expect(c.text).toContain("… 5 more lines elided");
    expect(c.text).toContain("the leading indentation of 100 lines");
  });

  test("rg --column: each kept line keeps its column", () => {
    const text = Array.from({ length: 40 }, (_, i) => `pipeline/savers/search${i % 4}.ts:${i + 1}:${(i % 9) + 3}:export const searchRule${i} = makeRule("search", ${i});`).join("\n");
    const c = compressToolResult(text)!;
    expect(c.rule).toBe("search");
    expect(c.text).toContain("pipeline/savers/search0.ts:\n  1:3:export const searchRule0");
    expect(c.text).toContain("  5:7:export const searchRule4");
  });
});
