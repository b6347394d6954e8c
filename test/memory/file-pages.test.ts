/**
 * Which mappings the idle trim may drop (src/memory/file-pages.ts, issue 17). The fixture is real
 * `/proc/PID/smaps` text of the compiled binary after 200 requests (paths renamed), a few seconds after
 * `bun build --compile` wrote it: its read-only mappings still show the page cache's not yet written-back
 * pages as `Private_Dirty`, and it has the RELRO mapping (`r--p` with `Anonymous: 12 kB`: pages the
 * dynamic loader relocated before making them read-only), libc's own RELRO, the writable data and
 * `.bun` mappings, the JIT's `rwxp` region and the allocator's arena.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanFileMappings, parseSmaps, releaseExecutablePages } from "../../src/memory/file-pages.ts";

const SMAPS = readFileSync(join(import.meta.dir, "../fixtures/smaps/compiled-binary.txt"), "utf8");
const EXE = "/opt/switchyard/switchyard";
const hex = (n: bigint) => n.toString(16);

test("parses every mapping with its range, permissions, path, Rss and Anonymous", () => {
  const maps = parseSmaps(SMAPS);
  expect(maps).toHaveLength(16);
  const relro = maps.find((m) => hex(m.start) === "685f000")!;
  expect(relro).toMatchObject({ perms: "r--p", path: EXE, rss: 32, anonymous: 12, locked: 0 });
  expect(hex(relro.end)).toBe("6867000");
  const arena = maps.find((m) => hex(m.start) === "50638a00000")!;
  expect(arena).toMatchObject({ perms: "rw-p", path: "", anonymous: 27248 });
  // Addresses above 2^53 survive (bigint): the vsyscall page.
  expect(hex(maps.at(-1)!.start)).toBe("ffffffffff600000");
});

test("chooses only the executable's read-only mappings without anonymous pages: read-only data and machine code", () => {
  const chosen = cleanFileMappings(SMAPS, EXE);
  expect(chosen.map((m) => `${hex(m.start)}-${hex(m.end)} ${m.perms}`)).toEqual(["200000-1a39000 r--p", "1a40000-684a000 r-xp"]);
  expect(chosen.reduce((kb, m) => kb + m.rss, 0)).toBe(7460 + 38728);
});

test("never the RELRO mapping (read-only, but relocated pages are Anonymous), the writable ones, libc, the JIT or the heap", () => {
  const chosen = new Set(cleanFileMappings(SMAPS, EXE).map((m) => hex(m.start)));
  expect(chosen.has("685f000")).toBe(false); // RELRO: r--p, Anonymous 12 kB
  expect(chosen.has("684a000")).toBe(false); // .tdata/.data: rw-p
  expect(chosen.has("6867000")).toBe(false); // .bun (our bundle), .got, .bss: rw-p
  // Another file (libc) is not chosen for the executable, not even its clean r-xp mapping.
  expect(cleanFileMappings(SMAPS, "/usr/lib/x86_64-linux-gnu/libc.so.6").map((m) => hex(m.start))).toEqual(["7f4684523000", "7f4684549000", "7f468469f000"]);
  // libc's RELRO (r--p with Anonymous 16 kB) is skipped by the same rule.
  expect(cleanFileMappings(SMAPS, "/usr/lib/x86_64-linux-gnu/libc.so.6").some((m) => hex(m.start) === "7f46846f2000")).toBe(false);
  // Anonymous and special mappings have no file path to match.
  for (const p of ["", "[heap]", "[vdso]", "[vsyscall]"]) expect(cleanFileMappings(SMAPS, p)).toEqual([]);
});

test("a mapping whose entry has no Anonymous line, or has locked pages, is not chosen", () => {
  const noAnon = SMAPS.split("\n").filter((l) => !l.startsWith("Anonymous:")).join("\n");
  expect(cleanFileMappings(noAnon, EXE)).toEqual([]);
  const locked = SMAPS.replace(/(01a40000-0684a000[\s\S]*?)Locked:\s+0 kB/, "$1Locked:            38728 kB");
  expect(cleanFileMappings(locked, EXE).map((m) => m.perms)).toEqual(["r--p"]);
});

test("releasing this process's executable pages leaves it working (Linux) or does nothing (elsewhere)", async () => {
  const r = await releaseExecutablePages();
  if (process.platform !== "linux") {
    expect(r).toBeUndefined();
    return;
  }
  expect(r).toBeDefined();
  expect(r!.mappings).toBeGreaterThan(0);
  expect(r!.releasedKb).toBeGreaterThan(0);
  // The code that runs next comes back from the page cache.
  expect(JSON.parse(JSON.stringify({ a: [1, "b"] }))).toEqual({ a: [1, "b"] });
  expect(new Bun.CryptoHasher("sha256").update("x").digest("hex")).toHaveLength(64);
});
