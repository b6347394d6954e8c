/**
 * The `stopping` mark a stop adds to instance.json (src/instance-file.ts markStopping) on a full disk
 * (the SRE tryout of 2026-12-07): its copy beside the file could not be written, and a 0-byte
 * `instance.json.<nonce>.tmp` stayed in the data directory with no word of it. The full disk here is
 * /dev/full behind the copy's name (every write to it fails with ENOSPC), so no root is needed.
 */
import { expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markStopping } from "../src/instance-file.ts";

test.skipIf(!existsSync("/dev/full"))("a mark that cannot be written: its copy is removed and a warning says why and what it means", () => {
  const dir = mkdtempSync(join(tmpdir(), "sy-mark-stopping-"));
  try {
    const file = join(dir, "instance.json");
    const text = JSON.stringify({ pid: process.pid, nonce: "abc123", url: "http://127.0.0.1:1" });
    writeFileSync(file, text);
    const tmp = `${file}.abc123.tmp`;
    symlinkSync("/dev/full", tmp);
    const warning = markStopping(file, "abc123", 5);
    expect(warning).toStartWith(`could not mark ${file} as stopping (`);
    expect(warning).toContain("switchyard stop");
    expect(() => lstatSync(tmp)).toThrow(); // nothing left beside it
    expect(readFileSync(file, "utf8")).toBe(text); // the file as it was

    expect(markStopping(file, "abc123", 6)).toBeUndefined(); // written: no warning
    expect(JSON.parse(readFileSync(file, "utf8")).stopping).toBe(6);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
